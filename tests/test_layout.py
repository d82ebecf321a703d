"""The package's shape: no import cycles, no function-local imports of the package's own
modules, the run store free of the engine, and modules a reader can take in."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "jaxrl", ROOT / "envs"]
MAX_LINES = 400

# function-local imports of project modules that are deliberate (lazy by design)
LAZY_IMPORTS = {
    "envs/registry.py",  # optional env families (gymnax, brax) load only when asked for
}


def _modules():
    for package in PACKAGES:
        yield from sorted(package.rglob("*.py"))


def _local_project_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{fn.name}: {n}" for n in names if n.split(".")[0] in ("jaxrl", "envs")]
    return found


def test_no_function_local_imports_of_the_project():
    offenders = {str(p.relative_to(ROOT)): _local_project_imports(p) for p in _modules()}
    offenders = {k: v for k, v in offenders.items() if v and k not in LAZY_IMPORTS}
    assert not offenders, offenders


def _imported_by(module: str) -> list[str]:
    code = (f"import json, sys; import {module}; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('jax', 'jaxrl', 'envs', 'flax', 'optax'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=120)
    return json.loads(out.stdout)


@pytest.mark.parametrize("module", ["jaxrl.runs.store", "jaxrl.runs.report", "jaxrl.runs.query",
                                    "jaxrl.runs.bench_report", "jaxrl.cli", "jaxrl.cli.store",
                                    "jaxrl.cli.listing"])
def test_the_run_store_does_not_load_the_engine(module):
    loaded = _imported_by(module)
    engine = [m for m in loaded if m.split(".")[0] in ("jax", "flax", "optax", "envs")
              or m.startswith(("jaxrl.engine", "jaxrl.api", "jaxrl.algos"))]
    assert not engine, engine


def test_listing_and_help_load_no_table_library():
    """``jaxrl --help`` and ``jaxrl runs ls`` (from the listing snapshot) need neither pandas,
    Arrow nor numpy: they answer in a fraction of a second."""
    code = ("import json, sys; import jaxrl.cli, jaxrl.cli.listing; print(json.dumps(sorted("
            "m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'pyarrow', 'jax'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=120)
    assert json.loads(out.stdout) == []


def test_modules_are_short_or_say_why():
    long = []
    for path in _modules():
        lines = path.read_text().count("\n")
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if lines > MAX_LINES and "Length:" not in doc:
            long.append(f"{path.relative_to(ROOT)} ({lines} lines)")
    assert not long, f"over {MAX_LINES} lines without a 'Length:' reason in the docstring: {long}"


def test_public_api_loads_lazily():
    import jaxrl

    assert set(jaxrl.__all__) >= {"train", "resume", "make_train", "sweep", "bench",
                                  "TrainResult", "NonFiniteMetricError", "seed_keys"}
    for name in jaxrl.__all__:
        assert getattr(jaxrl, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'train_unrecorded'"):
        jaxrl.train_unrecorded  # noqa: B018  (one name per idea: train(store=False))
