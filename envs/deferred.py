"""Import a suite's package without the plotting modules it only uses to render.

gymnax's env modules import ``seaborn`` and ``matplotlib.pyplot`` at their top for their
``render`` methods, which a training run never calls: 2.4 of the 2.9 s that ``import gymnax``
takes on a 2-core CPU (``python -X importtime``), paid by every process that makes a gymnax env
(each CLI run, each notebook kernel, each test subprocess). `import_deferring_plots` imports the
package with a stand-in for each plotting module that is not loaded yet; a stand-in imports the
real module the first time one of its attributes is read, so ``render`` still works. The
stand-ins leave ``sys.modules`` once the package is imported: any later ``import seaborn`` gets
the real module.
"""

from __future__ import annotations

import importlib
import sys
import types

PLOTTING = ("seaborn", "matplotlib.pyplot")


class _Deferred(types.ModuleType):
    """A stand-in for the module ``name``: reading any attribute imports it and reads there."""

    def __getattr__(self, attr: str):
        if sys.modules.get(self.__name__) is self:  # read while the package still imports
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), attr)


def import_deferring_plots(package: str) -> types.ModuleType:
    """``importlib.import_module(package)``, with the `PLOTTING` modules not loaded yet deferred
    while it imports (see the module's docstring). A package already imported is returned as is."""
    if package in sys.modules:
        return sys.modules[package]
    stand_ins = {name: _Deferred(name) for name in PLOTTING if name not in sys.modules}
    sys.modules.update(stand_ins)
    try:
        return importlib.import_module(package)
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
