"""Every package the code imports is declared: a module-level import in ``dependencies`` (the
README's main-job command installs those alone, with no lock file), a function-level one (an
optional feature: Ray, W&B, TensorBoard, Atari, notebooks) in ``dependencies`` or an extra.
`.ci/plain_install_check` proves the same on a real plain install; this test names the
missing package in seconds."""

import ast
import functools
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "jaxrl", ROOT / "envs"]
# needed at run time though no module of ours imports it
RUNTIME_ONLY = {"filelock": "JAX's persistent compilation cache with a size bound locks with it"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for group in project["optional-dependencies"].values() for r in group}
    return required, extras


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """Top-level names imported by ``path``: (at module level, inside functions)."""
    tree = ast.parse(path.read_text())
    inner = {id(n) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(fn)}
    top, local = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        (local if id(node) in inner else top).update(n.split(".")[0] for n in names)
    return top, local


def _third_party(names: set[str]) -> set[str]:
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("jaxrl", "envs")}


@functools.cache
def _packages() -> dict[str, list[str]]:
    """Top-level module -> the distributions that provide it (a scan of every installed
    distribution's files, so done once: it took 23 s of the test when done per module)."""
    return metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in _packages().get(module, [])}


def _undeclared(modules: set[str], allowed: set[str]) -> dict[str, set[str]]:
    return {m: _distributions(m) for m in modules if not _distributions(m) & allowed}


def test_every_import_is_a_declared_dependency():
    required, extras = _declared()
    top, local = set(), set()
    for package in PACKAGES:
        for path in package.rglob("*.py"):
            t, f = _imports(path)
            top |= _third_party(t)
            local |= _third_party(f)
    missing = _undeclared(top, required)
    assert not missing, f"imported at module level, not in dependencies: {missing}"
    missing = _undeclared(local - top, required | extras)
    assert not missing, f"imported inside functions, in no extra: {missing}"


def test_runtime_only_needs_are_declared():
    required, _ = _declared()
    assert set(RUNTIME_ONLY) <= required


def test_the_check_finds_an_undeclared_import():
    assert _undeclared({"yaml", "duckdb"}, {"duckdb"}) == {"yaml": {"pyyaml"}}


# What the GPU plan's machine lacks and no call carries (its image's package list, in the
# device tool's notes, against experiments/gpu_lease.sh's wheels): the run store's query
# engine, the studies' sampler, AdaStop, ffmpeg for videos and Ray. The commands it runs must
# import without them; the third loan lost its benches to `import duckdb` and `import optuna`
# at module level.
NOT_ON_THE_GPU_MACHINE = ("duckdb", "optuna", "adastop", "imageio_ffmpeg", "ray")
BLOCKED_IMPORTS = r'''
import importlib, importlib.abc, json, sys, warnings
BLOCKED = set(json.loads(sys.argv[1]))
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
sys.meta_path.insert(0, Blocked())
for module in json.loads(sys.argv[2]):
    importlib.import_module(module)
from jaxrl.runs import query
from jaxrl.runs.store import RunStore
store = RunStore(sys.argv[3])
with warnings.catch_warnings(record=True):
    print("listed:", len(query.ls(store)))
try:
    query.connect(store)
except query.QueryError as err:
    print("query:", err)
'''


@pytest.mark.parametrize("runs", [0, 2], ids=["empty-store", "runs-to-compact"])
def test_training_commands_import_without_the_query_engine_the_sampler_or_ray(tmp_path, runs):
    """Training and bench modules import without the GPU machine's missing packages; there the
    store still lists its runs, and a query says in one line that it needs duckdb, before it
    tries to compact anything (a store of finished runs used to end in a traceback)."""
    from tests.runs.test_store_reliability import write_run

    for i in range(runs):
        write_run(tmp_path / "runs", f"run-{i}", minute=i)
    modules = ["jaxrl.cli.training", "jaxrl.cli.ladder", "jaxrl.studies.bench.runner",
               "jaxrl.studies.throughput.point", "jaxrl.api"]
    proc = subprocess.run([sys.executable, "-c", BLOCKED_IMPORTS,
                           json.dumps(NOT_ON_THE_GPU_MACHINE), json.dumps(modules),
                           str(tmp_path / "runs")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"listed: {runs}" in proc.stdout
    assert "query: the run store's queries need duckdb" in proc.stdout
