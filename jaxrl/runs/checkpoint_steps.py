"""Which checkpoints a run has on disk, read without JAX or orbax: the store's readers (``jaxrl
runs progress``, a bench's carried progress) list them as the engine's restore does.

A checkpoint is the directory ``<directory>/<step>/`` that `jaxrl.engine.checkpoint` writes
(``step`` = chunks done); it is complete once orbax has finalized it (its step metadata file)
and the engine's manifest item is in it. A save still pending or cut short by a kill lacks one
of the two and is never listed.
"""

from __future__ import annotations

from etils import epath

MANIFEST = "manifest"  # the engine's item holding what a restore checks (`jaxrl.engine.checkpoint`)
_FINALIZED = "_CHECKPOINT_METADATA"  # written by orbax when a step's directory is complete


def complete_steps(directory) -> list[int]:
    """Steps with a complete checkpoint in ``directory`` (a path or an `epath.Path`),
    ascending: what a restore may read. ``[]`` if it cannot be read."""
    try:
        folder = directory if isinstance(directory, epath.Path) else epath.Path(directory)
        entries = list(folder.iterdir())
    except OSError:
        return []
    return sorted(int(p.name) for p in entries if p.name.isdigit() and _is_complete(p))


def _is_complete(step_dir: epath.Path) -> bool:
    """A finalized step directory: orbax's step metadata and the engine's manifest item."""
    try:
        return (step_dir / _FINALIZED).exists() and (step_dir / MANIFEST).is_dir()
    except OSError:
        return False
