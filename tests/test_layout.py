"""The package's shape: no import cycles, no function-local imports of the package's own
modules, the run store free of the engine, and modules a reader can take in."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxrl.algo_names import BUILT_IN

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = [ROOT / "jaxrl", ROOT / "envs"]
MAX_LINES = 400

# function-local imports of project modules that are deliberate (lazy by design)
LAZY_IMPORTS = {
    "envs/registry.py",  # optional env families (gymnax, brax) load only when asked for
    "jaxrl/cli/training.py",  # search and pbt (Optuna) load only when run: the other commands
                              # run where Optuna is not installed (the GPU plan's machine)
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


#: The part of `envs` that imports no JAX: the env-family table (and the package it lives in).
JAX_FREE_ENVS = ("envs", "envs.families")


def _imported_by(module: str) -> list[str]:
    code = (f"import json, sys; import {module}; "
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('jax', 'jaxrl', 'envs', 'flax', 'optax'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=120)
    return json.loads(out.stdout)


@pytest.mark.parametrize("module", ["jaxrl.runs.store", "jaxrl.runs.report", "jaxrl.runs.query",
                                    "jaxrl.studies.bench.report", "jaxrl.cli", "jaxrl.cli.store",
                                    "jaxrl.cli.listing"])
def test_the_run_store_does_not_load_the_engine(module):
    loaded = _imported_by(module)
    engine = [m for m in loaded if m.split(".")[0] in ("jax", "flax", "optax", "envs")
              or m.startswith(("jaxrl.engine", "jaxrl.api", "jaxrl.algos"))]
    engine = [m for m in engine if m not in JAX_FREE_ENVS]
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


# ---- import cycles, found statically ---------------------------------------------------------

def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_statements(body):
    """The statements Python runs on import: everything but function bodies and
    ``if TYPE_CHECKING:`` blocks (class bodies and other blocks included)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _top_level_statements(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            yield from _top_level_statements(getattr(node, field, []) or [])


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(packages=PACKAGES) -> dict[str, set[str]]:
    """``{module: the project modules it imports at module level}``. ``from x import y`` names
    the submodule ``x.y`` when there is one, else ``x``; ``import x.y`` names ``x.y``; the
    registry (``jaxrl.algos``) imports each module `jaxrl.algo_names.BUILT_IN` names."""
    paths = {_module_name(p): p for package in packages for p in sorted(package.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        targets = set()
        for node in _top_level_statements(ast.parse(path.read_text()).body):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, module, path.name == "__init__.py")
                subs = {f"{base}.{a.name}" for a in node.names} & set(paths)
                targets |= subs or {base}
                if len(subs) < len(node.names):
                    targets.add(base)
        graph[module] = {t for t in targets if t in paths and t != module}
    if "jaxrl.algos" in graph:  # the registry imports each built-in by its name
        graph["jaxrl.algos"] |= {f"jaxrl.algos.{name}" for name in BUILT_IN} & set(paths)
    return graph


def collapse(graph: dict[str, set[str]], depth: int) -> dict[str, set[str]]:
    """The graph between units of the first ``depth`` name parts (``jaxrl.engine`` for
    ``jaxrl.engine.loop`` at depth 2; a top-level module is a unit of its own), without
    imports inside a unit."""
    unit = lambda m: ".".join(m.split(".")[:depth])
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        out.setdefault(unit(module), set()).update(
            unit(t) for t in targets if unit(t) != unit(module))
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"x"}}) == ["x", "x"]
    folders = collapse({"p.e.loop": {"p.policies"}, "p.policies": {"p.e.spec"}, "p.e.spec": set()},
                       depth=2)
    assert find_cycle(folders) == ["p.e", "p.policies", "p.e"]


def test_the_import_graph_sees_imports_and_submodules():
    graph = import_graph()
    # from jaxrl.engine import programs
    assert "jaxrl.engine.programs" in graph["jaxrl.engine.loop"]
    assert "jaxrl.algos.ppo" in graph["jaxrl.algos"]  # the registry's import by name
    assert "jaxrl.algos.onpolicy" in graph["jaxrl.algos"]  # from jaxrl.algos import onpolicy
    assert "envs.core" in graph["jaxrl.engine.recorded"]  # from envs.core import ...


@pytest.mark.parametrize("depth", [None, 2, 1], ids=["modules", "subpackages", "packages"])
def test_no_import_cycles(depth):
    """No cycle between modules, between subpackages and top-level modules (``jaxrl.engine``,
    ``jaxrl.trained``, ``jaxrl.api``, ...), or between ``jaxrl`` and ``envs``."""
    graph = import_graph() if depth is None else collapse(import_graph(), depth)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# ---- what each wing may import ----------------------------------------------------------------

#: wing -> the wings it must not import (at module level; by name prefix). The house, bottom up:
#: envs; the ops; the parts (networks, buffers, env stepping, evaluation, the memory plan,
#: diagnostics); the algorithm layer; the engine; the run store (runs); trained results; the
#: API; the studies wing (sweeps, benches, ladders); the CLI on top. docs/architecture.md draws
#: it.
WING_RULES: dict[str, tuple[str, ...]] = {
    "envs": ("jaxrl",),
    "jaxrl.ops": ("jaxrl.parts", "jaxrl.algos", "jaxrl.engine", "jaxrl.runs", "jaxrl.trained",
                  "jaxrl.api", "jaxrl.studies", "jaxrl.cli"),
    "jaxrl.parts": ("jaxrl.algos", "jaxrl.engine", "jaxrl.runs", "jaxrl.trained", "jaxrl.api",
                    "jaxrl.studies", "jaxrl.cli"),
    "jaxrl.algos": ("jaxrl.engine", "jaxrl.trained", "jaxrl.api", "jaxrl.studies", "jaxrl.cli"),
    "jaxrl.runs": ("jaxrl.algos", "jaxrl.engine", "jaxrl.trained", "jaxrl.api", "jaxrl.studies",
                   "jaxrl.cli"),
    "jaxrl.engine": ("jaxrl.api", "jaxrl.studies", "jaxrl.cli"),
    "jaxrl.trained": ("jaxrl.engine", "jaxrl.api", "jaxrl.studies", "jaxrl.cli"),
    "jaxrl.api": ("jaxrl.studies", "jaxrl.cli"),
    "jaxrl.studies": ("jaxrl.cli",),
}


def _in(module: str, wing: str) -> bool:
    return module == wing or module.startswith(wing + ".")


@pytest.mark.parametrize("wing", sorted(WING_RULES))
def test_each_wing_imports_only_what_it_may(wing):
    graph = import_graph()
    found = sorted(f"{m} -> {t}" for m, targets in graph.items() if _in(m, wing)
                   for t in targets for banned in WING_RULES[wing] if _in(t, banned))
    assert not found, f"{wing} may not import {WING_RULES[wing]}: {found}"


def test_the_studies_wing_is_imported_only_by_the_cli():
    """Sweeps, benches and ladders sit on top: the engine, the store and the trained results
    never reach up into them (the public ``jaxrl.sweep`` / ``jaxrl.bench`` load lazily)."""
    graph = import_graph()
    found = sorted(f"{m} -> {t}" for m, targets in graph.items()
                   if not (_in(m, "jaxrl.studies") or _in(m, "jaxrl.cli"))
                   for t in targets if _in(t, "jaxrl.studies"))
    assert not found, found


def test_repository_data_is_found_in_one_place():
    """Only `jaxrl.repo_data` locates the checkout's data folders (presets, suites, ladders,
    peers): no other module climbs from its own file to the repository."""
    climbing = sorted(str(p.relative_to(ROOT)) for p in _modules()
                      if ".parents[" in p.read_text() and p.name != "repo_data.py")
    assert not climbing, climbing


ALGOS_MAX_LINES = 300


def test_the_algorithm_layer_has_no_module_over_300_lines():
    """An algorithm module reads like its paper's pseudocode and a kit module holds one step of
    it: none of them grows past `ALGOS_MAX_LINES` (no 'Length:' escape here)."""
    modules = sorted((ROOT / "jaxrl" / "algos").rglob("*.py"))
    long = [f"{p.relative_to(ROOT)} ({n} lines)" for p in modules
            if (n := p.read_text().count("\n")) > ALGOS_MAX_LINES]
    assert not long, long


def test_every_module_of_the_package_imports():
    """Each module of ``jaxrl`` and ``envs`` imports (the fast tier touches every module through
    this one, the ones its tests reach only in subprocesses included)."""
    import importlib

    for path in _modules():
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue  # `python -m jaxrl.cli` runs it: importing it would run the CLI
        if parts[-1] == "__init__":
            parts = parts[:-1]
        importlib.import_module(".".join(parts))


def test_the_engine_asks_every_algorithm_the_same_questions():
    """No kit's config or state is special-cased by the engine: it imports from the algorithm
    layer only the acting contract (`jaxrl.algos.acting`) and the registry."""
    allowed = {"jaxrl.algos", "jaxrl.algos.acting"}
    found = {}
    for path in sorted((ROOT / "jaxrl" / "engine").glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        kits = sorted(m for m in names if m.startswith("jaxrl.algos") and m not in allowed)
        if kits:
            found[path.name] = kits
    assert not found, found
