import os

# A persistent compilation cache makes repeated local runs fast; CI starts cold.
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", ".jax_cache"))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "1")

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_run_store(tmp_path_factory):
    """Runs recorded by tests go to a temporary store, never ./runs."""
    root = tmp_path_factory.mktemp("runs")
    old = os.environ.get("JAXRL_RUNS_DIR")
    os.environ["JAXRL_RUNS_DIR"] = str(root)
    yield root
    if old is None:
        os.environ.pop("JAXRL_RUNS_DIR", None)
    else:
        os.environ["JAXRL_RUNS_DIR"] = old
