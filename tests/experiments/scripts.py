"""Load a script of ``experiments/`` as a module, for the tests of the scripts themselves
(they are not a package, and the engine never imports them)."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


def load(name: str) -> ModuleType:
    """``experiments/<name>.py`` as a fresh module named ``name``."""
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
