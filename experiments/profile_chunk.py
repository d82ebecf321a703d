"""Where a ladder workload's time goes on this machine: the share of env step, reset, acting,
forward and backward passes, optimizer, replay, diagnostics and evaluation, from XLA's own
per-op timings (``jax.profiler``), and the host's share (dispatch, transfers, the chunk loop).

For each workload of the throughput ladder (``experiments/ladders/throughput.yaml``, its config
as the ladder runs it, at ``--members`` members, with `train`'s default periodic evaluation):

1. run the group once to compile it (the engine keeps its programs in this process);
2. run it again, timed: its wall time, and so its env-steps/s;
3. run it a third time under ``jax.profiler.trace``, timed too, and attribute each XLA op's
   time (every ``hlo_op`` event of the trace's XSpace) to a category by the named scope it
   was traced under (``jax.named_scope`` in the code: ``env_step``, ``env_reset``, ``act``,
   ``forward``, ``gradient``, ``optimizer``, ``replay``, ``diagnostics``, ``evaluation``),
   read from the op's metadata in the compiled programs' optimized HLO. The backward pass is
   the ``gradient`` ops under ``transpose(...)``; a fusion counts for the scope of its most
   expensive op (a dot or convolution when it has one, else its root).

Shares are of the traced run's wall time, and *between ops* is that wall less the ops' summed
time (0 when the thread pool ran ops side by side and the sum exceeds the wall): the XLA
runtime's work between ops, dispatch, transfers, the chunk loop, the NaN guard's reads.
Tracing lengthens every op by a roughly fixed cost, so a run of many short ops runs several
times slower traced: the report gives both walls and the op count, and the untraced wall per
op, the measure of a program of short ops. gymnax's step resets inside itself, so for gymnax
envs (CartPole, MinAtar) the reset is inside ``env step``.

    python experiments/profile_chunk.py [--workloads ppo-cartpole ...] [--members 1]
        [--out benchmarks/profile-cpu] [--steps N] [--max-chunk-updates N] [--config JSON]

``--steps``, ``--max-chunk-updates`` and ``--config`` (a JSON mapping merged into each
workload's config) shorten a workload whose trace outgrows the machine's memory, e.g. SAC
hopper's 128 gradient steps per round: the profile then says what it ran.

Writes ``results.json`` (per workload: category seconds and shares, wall, op sum) and
``report.md`` (the table) under ``--out``. Nothing else may run on the machine meanwhile. The
CPU profiler records every op of every loop iteration: at 64 members the trace of PPO CartPole
outgrew this machine's 24 GB (killed), so the committed profile is at 1 member.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

CATEGORIES = ("env_step", "env_reset", "act", "forward", "backward", "optimizer", "replay",
              "diagnostics", "evaluation", "other")
SCOPE_ORDER = ("evaluation", "diagnostics", "optimizer", "env_reset", "env_step", "replay",
               "act", "forward")
EXPENSIVE = ("dot(", "convolution(", "custom-call(")


def category(op_name: str) -> str:
    """The category of an op from its metadata ``op_name``: its named scopes, as JAX writes
    them inside the transformations around them (``vmap(env_step)``, ``transpose(jvp(...))``)."""
    names = set(re.findall(r"[\w.<>\-]+", op_name))
    for scope in SCOPE_ORDER:
        if scope in names:
            return scope
    if "gradient" in names:
        return "backward" if "transpose(" in op_name else "forward"
    return "other"


_INSTR = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = .*?metadata=\{op_name=\"([^\"]*)\"")
_COMP = re.compile(r"^%?([\w.\-]+) .*\{\s*$|^ENTRY %?([\w.\-]+)")
_CALLS = re.compile(r"calls=%?([\w.\-]+)")
_CONTAINER = re.compile(r" (while|conditional|call)\(%")


def op_categories(texts: list[str]) -> dict[tuple[str, str], str]:
    """``{(module name, instruction name): category}`` from the compiled programs' optimized
    HLO texts. A fusion or call takes its called computation's most expensive op's category."""
    out: dict[tuple[str, str], str] = {}
    for text in texts:
        module = re.search(r"^HloModule ([\w.\-]+)", text, re.M).group(1)
        computations: dict[str, list[str]] = {}
        current = None
        for line in text.splitlines():
            head = _COMP.match(line)
            if head and "=" not in line.split("{")[0]:
                current = head.group(1) or head.group(2)
                computations[current] = []
            elif current is not None and " = " in line:
                computations[current].append(line)

        def scope_of(lines: list[str], seen: set) -> str | None:
            best = None
            for line in lines:
                m = _INSTR.match(line)
                name = m.group(2) if m else None
                called = _CALLS.search(line)
                if called and called.group(1) not in seen and called.group(1) in computations:
                    inner = scope_of(computations[called.group(1)], seen | {called.group(1)})
                    name = inner or name
                if name is None:
                    continue
                if any(e in line for e in EXPENSIVE):
                    return name
                if line.lstrip().startswith("ROOT") or best is None:
                    best = name
            return best

        for lines in computations.values():
            found: dict[str, str] = {}
            for line in lines:
                head = re.match(r"^\s*(?:ROOT )?%?([\w.\-]+) = ", line)
                if head is None:
                    continue
                if _CONTAINER.search(line):  # its time is its body's ops' time
                    found[head.group(1)] = "container"
                    continue
                m = _INSTR.match(line)
                name = m.group(2) if m else None
                called = _CALLS.search(line)
                if called and called.group(1) in computations:
                    name = scope_of(computations[called.group(1)], {called.group(1)}) or name
                found[head.group(1)] = category(name) if name is not None else ""
            # an op without metadata (a copy, a tuple) counts for its computation's main scope
            named = Counter(c for c in found.values() if c not in ("", "container", "other"))
            main = named.most_common(1)[0][0] if named else "other"
            for op, kind in found.items():
                out[(module, op)] = kind or main
    return out


def op_seconds(trace_dir: Path, categories: dict) -> tuple[dict[str, float], dict[str, int]]:
    """Seconds of XLA op time and op counts per category in the trace (the unattributed ones
    under ``other``), read from the whole XSpace (``*.xplane.pb``): the trace-viewer JSON beside
    it keeps only its first 1,000,000 events, which a run of many short ops passes within a
    second (SAC hopper's 3 s run: 4.5M ops)."""
    from jax.profiler import ProfileData

    (path,) = sorted(trace_dir.rglob("*.xplane.pb"))[-1:]
    seconds, counts = dict.fromkeys(CATEGORIES, 0.0), dict.fromkeys(CATEGORIES, 0)
    for plane in ProfileData.from_file(str(path)).planes:
        for line in plane.lines:
            for event in line.events:
                stats = dict(event.stats)
                if "hlo_op" not in stats:
                    continue
                kind = categories.get((stats.get("hlo_module", ""), stats["hlo_op"]), "other")
                if kind != "container":
                    seconds[kind] += event.duration_ns / 1e9
                    counts[kind] += 1
    return seconds, counts


def shortened(workload, steps: int | None, max_chunk_updates: int | None, config: dict):
    """``workload`` with its budget, chunk length and config overridden where given."""
    return dataclasses.replace(
        workload, steps_per_member=steps or workload.steps_per_member,
        max_chunk_updates=max_chunk_updates or workload.max_chunk_updates,
        config={**workload.config, **config})


def profile(workload, members: int) -> dict:
    """One workload's profile (runs in this process: `main` starts one process per workload)."""
    import jax

    from jaxrl import algos
    from jaxrl.engine import programs
    from jaxrl.engine.loop import run_group
    from jaxrl.engine.spec import resolve_group, single_spec

    config = dict(workload.config)
    steps = max(workload.steps_per_member, algos.get(workload.algo).default_config(
        workload.env).replace(**config).steps_per_update)
    spec = single_spec(workload.algo, workload.env, members, steps,
                       max_chunk_updates=workload.max_chunk_updates,
                       env_kwargs=dict(workload.env_kwargs or {}) or None, **config)
    resolved = resolve_group(spec)
    start = time.perf_counter()
    run_group(spec, resolved, progress=False)  # compiles
    compile_run = time.perf_counter() - start
    start = time.perf_counter()
    outcome = run_group(spec, resolved, progress=False)  # nothing compiles: the timed run
    wall = time.perf_counter() - start
    trace_dir = Path(tempfile.mkdtemp(prefix="jaxrl-trace-"))
    start = time.perf_counter()
    with jax.profiler.trace(str(trace_dir)):
        run_group(spec, resolved, progress=False)  # the traced run: tracing lengthens each op
    traced_wall = time.perf_counter() - start
    texts = [program.as_text() for program in programs.PROGRAMS.values()]
    seconds, counts = op_seconds(trace_dir, op_categories(texts))
    shutil.rmtree(trace_dir, ignore_errors=True)
    op_sum = sum(seconds.values())
    done = outcome.done_updates() * outcome.steps_per_update * members
    return {"workload": workload.name, "algo": workload.algo, "env": workload.env,
            "members": members, "env_steps": int(done), "wall_seconds": wall,
            "config": dict(workload.config), "max_chunk_updates": workload.max_chunk_updates,
            "first_run_seconds": compile_run, "traced_wall_seconds": traced_wall,
            "op_seconds": op_sum, "op_counts": counts, "ops": sum(counts.values()),
            "host_seconds": max(0.0, traced_wall - op_sum),  # between ops, in the traced run
            "env_steps_per_second": done / wall, "seconds": seconds,
            "chunks": len(outcome.chunks), "evaluations": len(outcome.evals),
            "device": str(jax.devices()[0]), "jax": jax.__version__}


def markdown(rows: list[dict], commit: str) -> str:
    head = ("| workload | members | wall s | env-steps/s | ops | µs per op | traced wall s | "
            + " | ".join(c.replace("_", " ") for c in CATEGORIES) + " | between ops |")
    lines = [f"# Where a chunk's time goes (CPU, commit {commit})", "",
             "Made by `python experiments/profile_chunk.py` (its docstring says how). *wall s* "
             "and *env-steps/s*: the run without the profiler; *ops*: the XLA ops it "
             "executes (counted in the traced run, the same work), and *µs per op*: its wall "
             "over them. Each category: its ops' time in the traced run as a share of that "
             "run's wall (*traced wall s*); *between ops* = that wall less the ops' summed "
             "time: the XLA runtime between ops, dispatch, transfers and the host loop (0 "
             "where the ops' sum exceeds the wall: ops run side by side). Tracing lengthens "
             "each op, so where the traced wall is several times the wall the shares "
             "overstate short ops. gymnax envs (CartPole, MinAtar) reset inside their step, "
             "so their reset is inside env step. Evaluation is `train`'s default schedule "
             "(about one per chunk at these short ladder budgets, so its share is larger than "
             "in a long run).",
             "", head, "|" + "---|" * (len(CATEGORIES) + 8)]
    for r in rows:
        traced = r["traced_wall_seconds"]
        shares = [f"{100 * r['seconds'][c] / traced:.1f}%" for c in CATEGORIES]
        lines.append(f"| {r['workload']} | {r['members']} | {r['wall_seconds']:.2f} | "
                     f"{r['env_steps_per_second']:,.0f} | {r['ops'] / 1e6:.2f}M | "
                     f"{1e6 * r['wall_seconds'] / max(r['ops'], 1):.2f} | {traced:.2f} | "
                     + " | ".join(shares) + f" | {100 * r['host_seconds'] / traced:.1f}% |")
    return "\n".join(lines) + "\n"


def _short_args(args) -> list[str]:
    """The shortening options, passed on to the child process."""
    out = ["--config", args.config]
    if args.steps:
        out += ["--steps", str(args.steps)]
    if args.max_chunk_updates:
        out += ["--max-chunk-updates", str(args.max_chunk_updates)]
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", nargs="*", default=None)
    parser.add_argument("--members", type=int, nargs="*", default=[1])
    parser.add_argument("--out", default="benchmarks/profile-cpu")
    parser.add_argument("--steps", type=int, default=None, help="env steps per member")
    parser.add_argument("--max-chunk-updates", type=int, default=None)
    parser.add_argument("--config", default="{}", help="JSON merged into each workload's config")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # child: workload members
    parser.add_argument("--from-results", help="rewrite report.md from this results.json")
    args = parser.parse_args(argv)
    if args.from_results:
        data = json.loads(Path(args.from_results).read_text())
        Path(args.from_results).with_name("report.md").write_text(
            markdown(data["rows"], data["commit"]))
        return 0
    from jaxrl.studies.throughput import load_ladder, select

    ladder = load_ladder("throughput")
    short = (args.steps, args.max_chunk_updates, json.loads(args.config))
    if args.one:
        (workload,) = select(ladder, [args.one[0]])
        print(json.dumps(profile(shortened(workload, *short), int(args.one[1]))))
        return 0
    rows = []
    for workload in select(ladder, args.workloads):
        for members in args.members:
            env = {**os.environ, "JAXRL_COMPILE_CACHE": "0"}
            out = subprocess.run([sys.executable, __file__, "--one", workload.name, str(members),
                                  *_short_args(args)],
                                 env=env, capture_output=True, text=True, check=False)
            if out.returncode:
                print(f"{workload.name} x{members}: failed\n{out.stderr[-2000:]}",
                      file=sys.stderr)
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{workload.name} x{members}: wall {row['wall_seconds']:.2f} s, traced "
                  f"{row['traced_wall_seconds']:.2f} s, {row['ops']:,} ops taking "
                  f"{row['op_seconds']:.2f} s", file=sys.stderr, flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps({"commit": commit, "rows": rows}, indent=1)
                                         + "\n")
    (folder / "report.md").write_text(markdown(rows, commit))
    print(markdown(rows, commit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
