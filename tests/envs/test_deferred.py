"""A suite's package imported with its plotting modules deferred (`envs.deferred`): training
never loads them, rendering still works, and the stand-ins do not outlive the import."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from envs.deferred import import_deferring_plots

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> None:
    """``code`` in a fresh interpreter (this one may have loaded the plotting modules already)."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, cwd=REPO,
                   env={**os.environ, "MPLBACKEND": "Agg"})


def test_a_gymnax_env_is_made_without_loading_the_plotting_modules_and_still_renders():
    _run("""
        import sys
        import jax
        from envs.gymnax_adapter import make_gymnax
        env, params = make_gymnax("Pong-misc")
        env.reset(jax.random.key(0), params)
        assert not [m for m in ("seaborn", "matplotlib.pyplot") if m in sys.modules]
        from gymnax.environments.misc import pong
        _, state = pong.Pong().reset(jax.random.key(0), params)
        pong.Pong().render(state, params)  # seaborn's palette and pyplot's axes, loaded now
        import seaborn
        assert sys.modules["seaborn"] is seaborn and type(seaborn).__name__ == "module"
        assert "matplotlib.pyplot" in sys.modules
    """)


def test_the_stand_ins_leave_sys_modules_and_an_imported_package_is_returned_as_is(tmp_path):
    package = tmp_path / "plotty_suite"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import seaborn as sns\nimport matplotlib.pyplot as plt\n"
        "def palette():\n    return sns.color_palette('cubehelix', 2)\n")
    _run(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from envs.deferred import PLOTTING, import_deferring_plots
        suite = import_deferring_plots("plotty_suite")
        assert not [m for m in PLOTTING if m in sys.modules]
        assert type(suite.sns).__name__ == "_Deferred"
        assert len(suite.palette()) == 2
        assert type(sys.modules["seaborn"]).__name__ == "module"
        assert import_deferring_plots("plotty_suite") is suite
    """)


def test_a_package_already_imported_comes_back_unchanged():
    before = dict(sys.modules)
    assert import_deferring_plots("envs") is sys.modules["envs"]
    assert sys.modules == before  # no stand-in was put in, none is left behind
