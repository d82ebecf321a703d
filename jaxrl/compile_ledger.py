"""The compile ledger: which programs this machine has built and how long their compile took,
so that a run says before it compiles whether its programs will come from the persistent cache
(`jaxrl.compile_cache`) and about how long a cold compile of its env family takes here.

One JSON line per group whose programs the engine built, appended to `LEDGER_NAME` in the
persistent cache's folder (JAX's own eviction reads only its ``*-cache`` and ``*-atime``
files):

- ``programs``: ``{name: digest}``, each program as JAX's cache keys it (`digest`: its lowered
  module without debug information, the compiler options, ``XLA_FLAGS``, the backend's
  devices, the JAX and jaxlib versions); ``seconds``: ``{name: XLA compile seconds}``;
- ``algo``, ``family`` (`envs.registry.env_family`), ``env``, ``members``;
- ``wait``: the seconds the run waited for its programs; ``source``: "compiled", "partly
  cached" or "cache" (`jaxrl.engine.group_programs.compile_source`); ``at``: the UTC time.

A program is expected from the cache when a line holds its digest and the folder still holds
entries of its module (JAX evicts the least recently used), or its compile took less than the
cache's minimum (`jaxrl.compile_cache.MIN_COMPILE_SECONDS`: JAX does not store it, and it
compiles again in that time). The ledger keeps its newest
`MAX_LINES` lines; a line that does not parse is skipped, so one damaged line never hides the
others, and a ledger that cannot be written costs the run nothing but the note.

Before a family has a cold compile recorded here, the note cites `REFERENCE_WAITS`: the wait of
a first compile on this project's 2-core CPU (benchmarks/compile-ab-cpu, held there by
tests/test_compile_ledger.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from jaxrl.compile_cache import MIN_COMPILE_SECONDS

LEDGER_NAME = "jaxrl-compiles.jsonl"
MAX_LINES = 2000

#: A run's wait for its programs on a cold cache, one member, on a 2-core CPU, per env family:
#: (fewest seconds, most seconds, workloads measured), from benchmarks/compile-ab-cpu/results.json
#: (the "after" tree, one member, with and without the evaluation program).
REFERENCE_WAITS: dict[str, tuple[float, float, str]] = {
    "discrete": (3.15, 4.81, "PPO, DQN and PQN on CartPole"),
    "minatar": (4.00, 5.09, "PPO, DQN and PQN on Breakout-MinAtar"),
    "brax": (19.13, 35.23, "PPO and SAC on hopper"),
    "playground": (48.64, 48.64, "PPO on CheetahRun"),
    "craftax": (32.95, 32.95, "PPO on Craftax-Symbolic"),
}
REFERENCE_SOURCE = "benchmarks/compile-ab-cpu"


def ledger_path(cache_dir: Path | None) -> Path | None:
    """The ledger of the cache folder ``cache_dir`` (None when the cache is off)."""
    return None if cache_dir is None else Path(cache_dir) / LEDGER_NAME


def digest(lowered, options: dict) -> str:
    """A program's identity as JAX's persistent cache sees it: ``lowered`` (a
    ``jax.stages.Lowered``) without debug information, its compiler ``options``, ``XLA_FLAGS``,
    the devices and the JAX/jaxlib versions."""
    import jax
    import jaxlib

    h = hashlib.sha256(lowered.as_text().encode())
    devices = jax.devices()
    h.update(repr((sorted(options.items()), os.environ.get("XLA_FLAGS", ""), jax.__version__,
                   jaxlib.__version__, devices[0].platform, devices[0].device_kind,
                   len(devices))).encode())
    return h.hexdigest()[:32]


def read(path: Path | None) -> list[dict]:
    """The ledger's lines, oldest first; lines that do not parse are skipped."""
    if path is None:
        return []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    lines = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and isinstance(line.get("programs"), dict):
            lines.append(line)
    return lines


def record(path: Path | None, line: dict) -> None:
    """Append ``line`` to the ledger (keeping its newest `MAX_LINES`); a ledger that cannot be
    written is left as it is."""
    if path is None:
        return
    try:
        with path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        if path.stat().st_size > MAX_LINES * 600:  # about twice MAX_LINES lines: trim
            kept = read(path)[-MAX_LINES:]
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text("".join(json.dumps(x) + "\n" for x in kept))
            tmp.replace(path)
    except OSError:
        return


def entry(programs: dict[str, str], seconds: dict[str, float], algo: str, family: str,
          env: str, members: int, wait: float, source: str) -> dict:
    """A ledger line (see the module's docstring)."""
    return {"programs": programs, "seconds": {k: round(v, 3) for k, v in seconds.items()},
            "algo": algo, "family": family, "env": env,
            "members": members, "wait": round(wait, 3), "source": source,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


@dataclass(frozen=True)
class Outlook:
    """What a group's build will do: ``cached`` the programs expected from the cache,
    ``to_compile`` the others; ``cold`` the waits of this machine's cold compiles of the same
    algorithm and env family (else of the family), newest last, and ``cold_of`` what they are
    of ("ppo on brax envs", "brax programs")."""

    cached: list[str]
    to_compile: list[str]
    family: str
    cold: list[float] = field(default_factory=list)
    cold_of: str = ""


def outlook(lines: list[dict], programs: dict[str, str], algo: str, family: str,
            cache_dir: Path | None) -> Outlook:
    """The `Outlook` of building ``programs`` ({name: digest}) given the ledger's ``lines``; a
    program counts as cached only while ``cache_dir`` still holds entries of its module, or
    when its compile took less than the cache's minimum."""
    quick, seen = set(), set()
    for line in lines:
        seconds = line.get("seconds") if isinstance(line.get("seconds"), dict) else {}
        for name, d in line["programs"].items():
            seen.add(d)
            if isinstance(seconds.get(name), int | float) and seconds[name] < MIN_COMPILE_SECONDS:
                quick.add(d)
    cached = [name for name, d in programs.items() if cache_dir is not None and d in seen
              and (d in quick or _has_module(cache_dir, name))]
    cold = [line for line in lines if line.get("source") == "compiled"
            and line.get("family") == family and isinstance(line.get("wait"), int | float)]
    same = [line for line in cold if line.get("algo") == algo]
    chosen, of = (same, f"{algo} on {family} envs") if same else (cold, f"{family} programs")
    return Outlook(cached, [n for n in programs if n not in cached], family,
                   [float(line["wait"]) for line in chosen[-5:]], of if chosen else "")


def _has_module(cache_dir: Path, name: str) -> bool:
    """Whether ``cache_dir`` holds an entry of the program ``name`` (module ``jit_<name>``)."""
    return next(Path(cache_dir).glob(f"jit_{name}-*-cache"), None) is not None


def describe(o: Outlook) -> str:
    """One line for the user, before the compile starts."""
    total = len(o.cached) + len(o.to_compile)
    if not o.to_compile:
        return (f"{total} programs ({', '.join(o.cached)}) load from the compilation cache: "
                "compiled here before" + (f" ({cold_estimate(o)})" if o.cold else ""))
    head = (f"compiling {len(o.to_compile)} of {total} programs ({', '.join(o.to_compile)}"
            + (f"; {', '.join(o.cached)} from the cache)" if o.cached else ")"))
    return f"{head}: {cold_estimate(o)}"


def cold_estimate(o: Outlook) -> str:
    """About how long a cold compile of ``o.family`` takes: this machine's record, else the
    committed 2-core CPU reference, else that none is known."""
    if o.cold:
        if len(o.cold) == 1:
            return f"a cold compile of {o.cold_of} took {o.cold[0]:.0f} s here"
        return (f"a cold compile of {o.cold_of} took {statistics.median(o.cold):.0f} s here "
                f"(median of the last {len(o.cold)}, {min(o.cold):.0f}-{max(o.cold):.0f} s)")
    if o.family in REFERENCE_WAITS:
        low, high, what = REFERENCE_WAITS[o.family]
        span = f"{low:.0f} s" if round(low) == round(high) else f"{low:.0f}-{high:.0f} s"
        return (f"no compile of {o.family} programs recorded on this machine yet; on a 2-core "
                f"CPU a first compile took {span} ({what}: {REFERENCE_SOURCE})")
    return f"no compile of {o.family} programs recorded on this machine yet"
