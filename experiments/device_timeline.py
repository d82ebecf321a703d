"""The device's timeline between chunks: how long it idles while the host works (issue 76).

A run's loop dispatches chunk programs (and evaluation programs) and does host work between
them: metrics to the host, store writes, the NaN guard, evaluation returns, checkpoint copies,
digests and writes. Whatever the host does while no program is queued, the device idles. This
trains a workload with evaluation and checkpoints on, in a fresh process per version of the
code (``--code LABEL=DIR``: a folder holding its ``jaxrl`` and ``envs``, e.g. ``git archive
COMMIT jaxrl envs | tar -x -C DIR``), and records, for every program call in dispatch order:
when the host dispatched it, and when its outputs were ready (a watcher thread blocks on them).
On one device the programs run one after another, so call ``i`` occupies the device from
``max(dispatch_i, ready_{i-1})`` to ``ready_i``; the gaps between those intervals are the
device's idle time. Each gap is attributed to what the chunk before it was (plain, evaluated,
checkpointed). Checkpoint saves are timed too (the blocking part, on the host).

Nothing in the engine is changed for this: the programs the loop builds are wrapped from
outside (`jaxrl.engine.loop.build_programs`), so every version is measured the same way::

    python experiments/device_timeline.py --code before=/tmp/t0 --code after=. \\
        --workload ppo-cartpole-2048 --workload sac-hopper-64
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jaxrl.engine.spec import resolve

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "device-timeline-cpu" / "timeline.json"

# name -> train() keywords: evaluation every 2 chunks, a checkpoint every 3, 12 chunks
WORKLOADS = {
    "ppo-cartpole-2048": dict(algo="ppo", env="CartPole-v1", seeds=2048, total_steps=12 * 512,
                              num_envs=4, num_steps=128, max_chunk_updates=1, eval_every=2,
                              checkpoint_every=3, eval_episodes=2),
    "sac-hopper-64": dict(algo="sac", env="brax:hopper", seeds=64, total_steps=None,
                          max_chunk_updates=None, eval_every=2, checkpoint_every=3,
                          eval_episodes=1, buffer_size=100_000),
}
CHUNKS = 12

CHILD = r'''
import dataclasses, json, sys, threading, time
from concurrent.futures import Future
import jax
import jaxrl
from jaxrl.engine import loop
from jaxrl.engine.checkpoint import Checkpointer

calls, saves, lock = [], [], threading.Lock()

def watched(kind, fn):
    def call(*args):
        t = time.perf_counter()
        out = fn(*args)
        rec = {"kind": kind, "dispatch": t, "returned": time.perf_counter(), "ready": None}
        with lock:
            calls.append(rec)
        tail = out[1] if kind == "chunk" else out  # the chunk's metrics: never donated
        def wait():
            jax.block_until_ready(tail)
            rec["ready"] = time.perf_counter()
        threading.Thread(target=wait, daemon=True).start()
        return out
    return call

def watched_later(behind):
    """An evaluation program compiling behind the first chunks (since 2026-11-29), watched."""
    out = Future()
    def done(f):
        if f.exception() is not None:
            out.set_exception(f.exception())
        else:
            out.set_result(f.result()._replace(program=watched("eval", f.result().program)))
    behind.add_done_callback(done)
    return out

build = loop.build_programs
def built(*args, **kw):
    progs, state = build(*args, **kw)
    progs = dataclasses.replace(progs, chunk_fn=watched("chunk", progs.chunk_fn))
    if hasattr(progs, "eval_behind"):
        if progs.eval_behind is not None:
            progs.eval_behind = watched_later(progs.eval_behind)
    elif progs.eval_fn is not None:
        progs = dataclasses.replace(progs, eval_fn=watched("eval", progs.eval_fn))
    return progs, state
loop.build_programs = built

save = Checkpointer.save
def timed_save(self, step, state, meta):
    t = time.perf_counter()
    save(self, step, state, meta)
    saves.append({"step": int(step), "start": t, "end": time.perf_counter()})
Checkpointer.save = timed_save

kw = json.loads(sys.argv[1])
algo, env = kw.pop("algo"), kw.pop("env")
t0 = time.perf_counter()
result = jaxrl.train(algo, env=env, progress=False, runs_dir=sys.argv[2], **kw)
end = time.perf_counter()
while any(c["ready"] is None for c in calls):
    time.sleep(0.01)
print(json.dumps({"calls": calls, "saves": saves, "train_start": t0, "train_end": end,
                  "compile_seconds": result.compile_seconds,
                  "run_seconds": result.run_seconds}))
'''


def device_intervals(calls: list[dict]) -> list[tuple[float, float]]:
    """``[(start, end)]`` of each call on one device that runs them in dispatch order."""
    out, free = [], float("-inf")
    for c in sorted(calls, key=lambda c: c["dispatch"]):
        start = max(c["dispatch"], free)
        out.append((start, c["ready"]))
        free = c["ready"]
    return out


def summarize(record: dict, evaluated: set[int], checkpointed: set[int]) -> dict:
    """The device's busy and idle seconds from the first chunk's start to the last call's end,
    and each idle gap after a chunk, by what that chunk was (chunk numbers from 0)."""
    calls = sorted(record["calls"], key=lambda c: c["dispatch"])
    spans = device_intervals(calls)
    chunk_ix = [i for i, c in enumerate(calls) if c["kind"] == "chunk"]
    first = spans[chunk_ix[0]][0]
    last = spans[-1][1]
    busy = sum(end - max(start, first) for start, end in spans if end > first)
    gaps: dict[str, list[float]] = {"plain": [], "evaluated": [], "checkpointed": [],
                                    "evaluated_and_checkpointed": []}
    for n, i in enumerate(chunk_ix[:-1]):  # the idle time from a chunk's end to the next call
        after = spans[i][1]
        nxt = spans[i + 1][0]
        kind = ("evaluated_and_checkpointed" if n in evaluated and n in checkpointed else
                "evaluated" if n in evaluated else "checkpointed" if n in checkpointed else
                "plain")
        gaps[kind].append(round(nxt - after, 4))
    total = last - first
    return {"span_s": round(total, 3), "device_busy_s": round(busy, 3),
            "device_idle_s": round(total - busy, 3),
            "idle_share": round((total - busy) / total, 4) if total > 0 else None,
            "idle_gap_after_chunk_s": gaps,
            "checkpoint_blocking_s": [round(s["end"] - s["start"], 4) for s in record["saves"]],
            # how long each chunk's call held the host before returning: near 0 where dispatch
            # is asynchronous; near the chunk's own time where the launch waits on the device
            "dispatch_blocking_s": [round(c["returned"] - c["dispatch"], 4) for c in calls
                                    if c["kind"] == "chunk" and "returned" in c],
            "compile_seconds": round(record["compile_seconds"], 2),
            "run_seconds": round(record["run_seconds"], 3)}


def train_kwargs(name: str) -> dict:
    """The workload's `jaxrl.train` keywords, its budget made ``CHUNKS`` chunks where the
    algorithm's defaults decide the update size (SAC's: its env-step rounds per update)."""
    kw = dict(WORKLOADS[name])
    if kw["total_steps"] is None:  # SAC: 12 chunks of 1 update, learning from the third
        _, _, _, config, _ = resolve(kw["algo"], kw["env"], 10**6, 1, None)
        per_update = config.steps_per_update
        kw.update(total_steps=CHUNKS * per_update, learning_starts=2 * per_update,
                  max_chunk_updates=1)
    return kw


def schedule(kw: dict) -> tuple[set[int], set[int]]:
    chunks = CHUNKS
    evaluated = {c for c in range(chunks) if (c + 1) % kw["eval_every"] == 0 or c == chunks - 1}
    checkpointed = {c for c in range(chunks) if (c + 1) % kw["checkpoint_every"] == 0
                    or c == chunks - 1}
    return evaluated, checkpointed


def run_one(code: Path, kw: dict) -> dict:
    with tempfile.TemporaryDirectory() as runs:
        # the code first, then whatever the caller's path holds (the GPU plan's wheel folders:
        # replacing it lost gymnax there, and the third loan's timeline with it)
        path = [str(code), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(kw), runs], cwd=code,
                              env=env, capture_output=True, text=True)
    if proc.returncode != 0:  # the child's own last words, which a caller keeps (gpu_plan)
        sys.stderr.write(proc.stderr[-20_000:])
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"device_timeline: the training child exited {proc.returncode}: {last}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), default=[])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--note", default="", help="what else the machine did meanwhile")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    codes = dict(c.split("=", 1) for c in args.code) or {"after": str(REPO)}
    data = json.loads(args.out.read_text()) if args.out.is_file() else {}
    for name in args.workload or sorted(WORKLOADS):
        kw = train_kwargs(name)
        evaluated, checkpointed = schedule(kw)
        for rep in range(args.repeats):
            for label, code in (list(codes.items())[:: 1 if rep % 2 == 0 else -1]):
                load = os.getloadavg()[0]
                record = run_one(Path(code).resolve(), kw)
                summary = {**summarize(record, evaluated, checkpointed),
                           "load_average_1m_before": round(load, 2)}
                entry = data.setdefault(name, {"train": kw, "runs": {}})
                entry["train"] = kw
                entry["runs"].setdefault(label, []).append(summary)
                print(name, label, json.dumps({k: summary[k] for k in
                                              ("idle_share", "device_idle_s", "span_s")}),
                      flush=True)
        data[name]["notes"] = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "codes": codes,
                               "machine": f"{os.cpu_count()} CPU cores; {args.note}"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
