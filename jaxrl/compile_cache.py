"""JAX's persistent compilation cache, on by default: a program compiled once on a machine is
loaded from disk by every later process that builds the same program.

The engine compiles each program ahead of time (`jaxrl.engine.programs.compiled`); JAX keys a
cached executable on the program's HLO, the compile options, the devices and the JAX/jaxlib
versions, so a changed program, another device layout or another JAX version is a miss, never a
wrong hit. Only traced hyperparameters changing does not change the program (they are inputs).

Settings, read when the first program compiles:

- ``$JAXRL_CACHE_DIR``: the folder (default ``$XDG_CACHE_HOME/jaxrl/xla``, else
  ``~/.cache/jaxrl/xla``). A ``$JAX_COMPILATION_CACHE_DIR`` set by the user wins over both.
- ``$JAXRL_COMPILE_CACHE=0`` (or ``jaxrl ... --no-compile-cache``, or `disable()`): off.
- ``$JAXRL_CACHE_MAX_BYTES``: the size bound (default 4 GiB); JAX evicts the least recently
  used entries beyond it.

An entry that cannot be read (truncated, corrupted) is skipped with a one-line warning and the
program is compiled afresh (JAX's own handling, ``jax_raise_persistent_cache_errors`` off).

JAX's size bound keeps an access-time file beside each entry, and its eviction reads them all
before every write. A process that used the folder without a bound (plain JAX with
``$JAX_COMPILATION_CACHE_DIR`` set, a kill between the two writes) leaves entries without one,
and then every later write fails. `heal` gives such entries an access time (their mtime) when
the cache is configured, and again if a write fails.

`hits` counts the executables loaded from the cache, so a caller can tell whether a compile was
served from it.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path

DIR_VAR = "JAXRL_CACHE_DIR"
SWITCH_VAR = "JAXRL_COMPILE_CACHE"
SIZE_VAR = "JAXRL_CACHE_MAX_BYTES"
DEFAULT_MAX_BYTES = 4 << 30
MIN_COMPILE_SECONDS = 0.2  # smaller programs cost more to write than to recompile
_HIT_EVENT = "/jax/compilation_cache/cache_hits"

_state = {"configured": False, "enabled": None, "hits": 0}
_lock = threading.Lock()
_thread = threading.local()  # per thread: its hits


def default_dir() -> Path:
    """``$JAXRL_CACHE_DIR``, else the per-user cache folder."""
    if os.environ.get(DIR_VAR):
        return Path(os.environ[DIR_VAR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jaxrl" / "xla"


def wanted() -> bool:
    """Whether the cache is on: not switched off by `disable()` or ``$JAXRL_COMPILE_CACHE``."""
    if _state["enabled"] is not None:
        return _state["enabled"]
    return os.environ.get(SWITCH_VAR, "1").strip().lower() not in ("0", "false", "off", "no")


def disable() -> None:
    """Turn the cache off for this process (before the first program compiles)."""
    _state["enabled"] = False
    if _state["configured"]:
        import jax

        jax.config.update("jax_enable_compilation_cache", False)


def max_bytes() -> int:
    raw = os.environ.get(SIZE_VAR, "").strip()
    try:
        return int(float(raw)) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        warnings.warn(f"ignoring {SIZE_VAR}={raw!r} (not a number of bytes)", stacklevel=2)
        return DEFAULT_MAX_BYTES


def configure() -> Path | None:
    """Point JAX at the cache folder once per process (idempotent); returns the folder, or None
    when the cache is off or the folder cannot be created (a one-line warning, no crash)."""
    with _lock:
        if _state["configured"]:
            return _current_dir()
        _state["configured"] = True
        import jax
        import jax.monitoring

        jax.monitoring.register_event_listener(_on_event)
        if not wanted():
            jax.config.update("jax_enable_compilation_cache", False)
            return None
        folder = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(default_dir())
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            warnings.warn(f"compilation cache off: cannot create {folder} ({e.strerror})",
                          stacklevel=2)
            jax.config.update("jax_enable_compilation_cache", False)
            return None
        jax.config.update("jax_compilation_cache_dir", folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
        jax.config.update("jax_compilation_cache_max_size", max_bytes())
        heal(Path(folder))
        return Path(folder)


def heal(folder: Path | None = None) -> int:
    """Give every entry of ``folder`` (default: the configured one) that has no access-time
    file one, stamped with the entry's mtime, so that JAX's eviction scan (which reads them all
    before each write) cannot fail on it. Returns how many were added."""
    folder = folder if folder is not None else _current_dir()
    added = 0
    for entry in folder.glob("*-cache") if folder else ():
        stamp = entry.with_name(entry.name.removesuffix("-cache") + "-atime")
        try:
            if not stamp.exists():
                stamp.write_bytes(entry.stat().st_mtime_ns.to_bytes(8, "little"))
                added += 1
        except OSError:  # removed by a concurrent eviction, or a read-only folder
            continue
    return added


def _current_dir() -> Path | None:
    import jax

    if not jax.config.jax_enable_compilation_cache or not jax.config.jax_compilation_cache_dir:
        return None
    return Path(jax.config.jax_compilation_cache_dir)


def drop_unreadable(module_name: str) -> int:
    """Delete the cache entries of ``module_name`` that no longer decompress (JAX skips a bad
    entry but never replaces it, so it would warn on every run); the next compile writes a good
    one. Returns how many were dropped."""
    from jax._src.compilation_cache import decompress_executable

    folder = _current_dir()
    dropped = 0
    for path in folder.glob(f"{module_name}-*-cache") if folder else ():
        try:
            decompress_executable(path.read_bytes())
        except Exception:  # any failure to decompress: the entry is unusable
            path.unlink(missing_ok=True)
            dropped += 1
    return dropped


def _on_event(event: str, **_) -> None:
    if event == _HIT_EVENT:  # JAX reports it in the thread that compiles
        _state["hits"] += 1
        _thread.hits = getattr(_thread, "hits", 0) + 1


def hits() -> int:
    """Executables loaded from the persistent cache so far in this process."""
    return _state["hits"]


def thread_hits() -> int:
    """Executables loaded from the persistent cache so far by the calling thread (programs
    compiled side by side each count their own, `jaxrl.engine.programs.compile_lowered`)."""
    return getattr(_thread, "hits", 0)
