"""The notebooks run top to bottom at a tiny budget (JAXRL_NOTEBOOK_SMOKE=1)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path, monkeypatch):
    monkeypatch.setenv("JAXRL_NOTEBOOK_SMOKE", "1")
    monkeypatch.setenv("JAXRL_RUNS_DIR", str(tmp_path / "runs"))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the curves are drawn inline"


def test_there_is_a_notebook_for_each_way_of_working():
    expected = {"quickstart", "sweeps", "search", "debugging", "benchmarking", "custom_env",
                "custom_algorithm"}
    assert expected <= {p.stem for p in NOTEBOOKS}
