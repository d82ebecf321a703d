"""The GPU plan: what a lent GPU machine runs, in two calls sized to a loan's 15 minutes.

    python experiments/gpu_plan.py first  --out DIR --work DIR --deadline EPOCH [--dry] ...
    python experiments/gpu_plan.py second --out DIR --work DIR --deadline EPOCH [--dry] ...
    python experiments/gpu_plan.py setup  --out DIR --peer-python PATH --install-seconds S
    python experiments/gpu_plan.py adopt FILES_AT [--into REPO_ROOT]      # here, after a call

(`experiments/gpu_lease.sh first` and `second` install the carried wheels and call these; its
header has the arithmetic of the minutes.)

Every call walks one order of value until its deadline, skipping what earlier calls measured:
the headline question first, jaxrl and rejax 0.1.3 on the same GPU, in the anchors'
configurations (`experiments/ladders/throughput.yaml`), at the anchors' member counts (`FIRST`);
the compilation cache check; a profile of the rung where jaxrl trails rejax most, both
libraries' runs (`profile_step`); then results at the references' own budgets, in order of
result per GPU minute (`BENCHES`: MinAtar, Playground's DM Control Suite, IQN on Navix,
Spinning Up's off-policy cells, Craftax), each entry relayed from call to call and loan to loan
through its committed progress folder (but those that keep a replay buffer, far over what a call
brings back: each must fit one call); the rest of the ladder last (`SECOND`). ``first`` and
``second`` name the loan's two calls (the first has 7.5 minutes, the second what the loan has
left), so the first call of the first loan answers the headline and a later call or loan goes on
from there.

Nothing is measured twice, within a loan or across loans: the ladder's ``results.json`` starts
from the last call's on the same machine (`LAST_CALL`: the loan's second call needs no adopt
before it), else the committed ``benchmarks/throughput-gpu/results.json`` (its rungs are
skipped), and is
rewritten in ``--out`` after every rung, so a call killed at its limit still brings back all it
measured; a rung the call's deadline cuts short or leaves out is recorded ``skipped`` and
measured by the next call. A bench entry is done when ``benchmarks/gpu-benches/<entry>/`` holds
its ``results.json``, or when another committed report of its suite at full budget holds it
finished with its seeds (a cell the CPU ran: `finished_elsewhere`); a relayed entry not finished has its progress folder in
``benchmarks/gpu-benches/progress/<entry>/``. ``plan.json`` (the calls, the machine, the cache
check, the benches with their seconds and expected minutes) is rewritten beside it.

What comes back (at most 8 files, 16 MiB each, in ``--out``): results.json, report.md,
plan.json (the machine and versions from ``setup`` included), plan.log, benches.tgz (each
finished bench's report, and the progress folders of relayed entries not finished, as many as
fit), timeline.json (`timeline_step`; rejax's SAC with jaxrl's replay draw, `sac_draw_step`,
and jaxrl's SAC as shipped, patched and profiled, `sac_cost_step`, go in plan.json), profile.tgz (the `jax.profiler` traces of the rung where jaxrl
trails rejax most, both libraries', as far as they fit), xla-cache.tgz (the persistent compilation caches of both
libraries, for the next call on the same GPU kind), each when it fits in 16 MiB.

``GPU_PLAN_NO_PROFILE=1`` leaves the profile out of a call that must put results first.

``--dry`` runs the same plan at tiny sizes on the CPU (``JAX_PLATFORMS=cpu``): member counts
capped at 4, a twentieth of each rung's steps, benches at 2 seeds and a thousandth of their
budget (`experiments/gpu_plan_dryrun.sh`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from jaxrl.engine.spec import MAX_CHUNK_UPDATES
from jaxrl.runs.store import StoreError
from jaxrl.studies.bench.results_file import read_results
from jaxrl.studies.throughput import load_ladder, run_rungs, write_figure, write_report
from jaxrl.studies.throughput.ladder import RESULTS_FILE, Rung, load_results, measure_rung
from jaxrl.studies.throughput.point import PROFILE_VAR
from jaxrl.studies.throughput.report import whole_run_rate
from jaxrl.studies.throughput.workloads import Workload

REPO = Path(__file__).resolve().parents[1]
COMMITTED = Path("benchmarks") / "throughput-gpu"
BENCHED = Path("benchmarks") / "gpu-benches"
TIMELINE_COMMITTED = Path("benchmarks") / "device-timeline-gpu"
RUNG_SECONDS = 240.0
"""Each rung's own cap: past it the rung is recorded failed (timed out) and the plan goes on. In
the dry run on a busy 2-core CPU, rejax's brax hopper rungs at 4 members took over 150 s; the
compile of brax has never been timed on a GPU here."""
OUT_LIMIT = 16 << 20
"""What one file that comes back from a call may weigh."""

SAC_GPU_STEPS = 20_480
"""SAC's rungs on a GPU: the 10,240-step random fill and one learning chunk of 10,240 (the
CPU ladder's third chunk would cost rejax 23 s more at 256 members, at its published rate)."""

PPO_GPU_SCALE = 16
"""The PPO workloads that have a peer run at this many times the CPU ladder's budget on a GPU,
in the engine's default chunks (`MAX_CHUNK_UPDATES`, as a user's run has them; the CPU ladder
cuts its short runs into chunks of 4-16 updates). At the CPU budgets the first loan's PPO runs
lasted 0.35-1.6 s on an H200, in 2-4 chunks each, too short to tell a fixed per-run or
per-chunk cost from a per-step one (benchmarks/throughput-gpu/NOTES.md); at 16 times they last
about 5-25 s, in 8-32 chunks. Their short-budget points are kept in
benchmarks/throughput-gpu/short-budget/."""

FIRST = [("ppo-cartpole", 2048), ("ppo-breakout-minatar", 256), ("ppo-brax-hopper", 256),
         ("sac-brax-hopper", 256), ("ppo-cartpole", 1)]
"""The headline, in order of value: each anchor's member count (the PPO ones at
`PPO_GPU_SCALE` times the CPU budget), and PPO CartPole at 1 member. It decides whether jaxrl is
faster than rejax on the GPU, so it comes first; the profile of the rung where jaxrl trails
most follows it."""

SECOND = [("ppo-breakout-minatar", 1), ("ppo-brax-hopper", 1), ("sac-brax-hopper", 1),
          *[(w, m) for m in (64, 8192, 1024, 16, 4096, 4)
            for w in ("ppo-cartpole", "ppo-breakout-minatar")],
          ("ppo-cartpole", 256), ("ppo-breakout-minatar", 2048),
          ("pqn-breakout-minatar", 1), ("pqn-breakout-minatar", 256),
          ("dqn-cartpole", 1), ("dqn-cartpole", 256),
          ("ppo-playground-cheetah", 1), ("ppo-playground-cheetah", 64),
          ("ppo-craftax-symbolic", 1), ("ppo-craftax-symbolic", 64)]
"""After the benches: the rest of the ladder (the 1-member rungs of MinAtar, hopper and SAC,
PPO CartPole and PPO Breakout-MinAtar up to 8,192 members, then PQN, DQN, and PPO on
Playground's CheetahRun and on Craftax-Symbolic)."""


@dataclasses.dataclass(frozen=True)
class Bench:
    """A `jaxrl bench` entry the plan runs at its full budget: ``suite``, ``entry``, ``seeds``;
    ``relay``: whether its checkpoint is small enough to come back from a call, so that an entry
    the call cuts goes on in the next one (on-policy state: kilobytes to a few MB; an off-policy
    entry's replay buffer, about 1 GB at 8 seeds of a 1M buffer, cannot, so it must fit one
    call); ``minutes``: the GPU minutes it is expected to take and ``basis``, how that figure was
    come by (measured on a loan, or estimated from a loan's rates)."""

    suite: str
    entry: str
    seeds: int
    relay: bool
    minutes: float
    basis: str

    @property
    def slug(self) -> str:
        return self.entry.replace("/gymnax:", "-").replace("/", "-").replace(":", "-")


_MINATAR = ("estimated: 16 seeds x 10M env steps = 160M at the first loan's 15.7M env-steps/s of "
            "PPO Breakout-MinAtar at 256 members, taken 5x slower at 16 members, plus a minute "
            "of compile")
_PQN = ("estimated: 16 seeds x 5M = 80M env steps at a third of PPO's MinAtar rate (the CPU "
        "ladder's PQN/PPO ratio), plus a minute of compile")
_PLAYGROUND = ("estimated: 8 seeds x 60M = 480M env steps at about 1.5M env-steps/s (no "
               "Playground rate measured on a GPU yet: the ladder's ppo-playground-cheetah rungs "
               "come later), plus two minutes of compile")
_OFF_POLICY = ("estimated: 3M sequential gradient steps at the first loan's SAC hopper step "
               "(527k env-steps/s at 256 members: 0.49 ms a step), plus a minute of compile; "
               "longer than a call, and its replay buffer cannot come back from one: needs a "
               "machine held for half an hour")
_ON_POLICY = ("estimated: 8 seeds x 3M = 24M env steps at a quarter of the second loan's whole-run "
              "5.33M env-steps/s of PPO brax hopper at 256 members (fewer members fill the GPU "
              "less), plus a minute of compile; hours a cell on the 2-core CPU, which runs "
              "them in turn (benchmarks/mujoco-cpu/NOTES.md)")
BENCHES = [
    *[Bench("minatar", f"ppo/gymnax:{game}-MinAtar", 16, True, 3.0, _MINATAR)
      for game in ("Breakout", "SpaceInvaders", "Asterix", "Freeway")],
    *[Bench("minatar", f"pqn/gymnax:{game}-MinAtar", 16, True, 2.5, _PQN)
      for game in ("Breakout", "SpaceInvaders", "Asterix", "Freeway")],
    *[Bench("playground_dmc", f"ppo/playground:{task}", 8, True, 7.5, _PLAYGROUND)
      for task in ("CartpoleBalance", "CartpoleSwingup", "FingerSpin", "PointMass", "BallInCup",
                   "ReacherEasy", "CheetahRun", "WalkerWalk")],
    Bench("navix", "iqn/navix:Navix-DoorKey-8x8-v0", 8, False, 4.0,
          "estimated: 8 seeds x 1M env steps, about 9 hours on the 2-core CPU beside "
          "other work (benchmarks/navix-cpu/q_rates.json; 4.1 alone, and running there "
          "across sessions: benchmarks/navix-cpu/NOTES.md), taken 200x faster; its replay buffer "
          "(131,072 transitions a seed) cannot come back from a call: must fit one"),
    Bench("navix", "iqn/navix:Navix-LavaGapS6-v0", 8, False, 4.0,
          "estimated as DoorKey-8x8's"),
    *[Bench("mujoco", f"{algo}-3M/brax:{body}", 8, False, 26.0, _OFF_POLICY)
      for algo in ("sac", "td3", "ddpg") for body in ("hopper", "walker2d", "halfcheetah")],
    *[Bench("mujoco", f"{algo}-3M/brax:{body}", 8, True, 2.0, _ON_POLICY)
      for algo in ("ppo", "trpo", "vpg") for body in ("hopper", "walker2d", "halfcheetah", "ant")],
    Bench("craftax", "ppo/craftax:Craftax-Symbolic-v1", 8, True, 3.0,
          "estimated: 8M env steps, 3-5 hours of arithmetic on the 2-core CPU, taken 100x "
          "faster"),
    Bench("craftax", "ppo-gru/craftax:Craftax-Symbolic-v1", 8, True, 4.0, "estimated as PPO's"),
    Bench("craftax-rnn", "ppo-rnn-baseline/craftax:Craftax-Symbolic-v1", 8, True, 5.0,
          "estimated as PPO's, with the baseline's larger network"),
    Bench("craftax", "ppo/craftax:Craftax-Classic-Symbolic-v1", 8, True, 3.0,
          "estimated as Symbolic's"),
]
"""After the headline and its profile, results at the references' budgets, in order of result
per GPU minute (issue 75): PPO on the four gymnax MinAtar games at 10M steps and PQN at its
reference's 5M, 16 seeds, against gymnax's baselines and the MinAtar paper; Playground's DM
Control Suite at Playground's own budget and configuration (``playground_dmc``: 60M steps, 8
seeds); IQN on Navix's two tasks of its published table; Spinning Up's off-policy cells at 3M
(each longer than a call: they run only where a call has the time), then its twelve on-policy
cells (VPG, TRPO, PPO; issue 72's, hours a cell on the 2-core CPU: those it finished are not run
again); Craftax's 1M
scoreboard entries. An entry with ``relay`` keeps its progress folder (`jaxrl bench --resume-from`): a call
that cuts it brings the folder back in benches.tgz, `adopt` commits it under
``benchmarks/gpu-benches/progress/``, and the next call, on this machine or another, resumes it
from there to the result an uninterrupted run gives."""

CACHE_CHECK = ("ppo-cartpole", 1)
"""Measured again after the headline, its programs in the persistent compilation cache (the
machine's own, or the one an earlier call brought back and the next carried in): the compile
seconds the cache saves, kept in plan.json (not a ladder point)."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _read_json(path: Path, default):
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as err:
        sys.exit(f"gpu_plan: {path} cannot be read ({err}); move it away to start over")


def _write_json(path: Path, data) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)


def workloads(dry: bool) -> dict[str, Workload]:
    """The ladder's workloads as the plan runs them (SAC at `SAC_GPU_STEPS`, the PPO workloads
    with a peer at `PPO_GPU_SCALE` times their budget; dry: a 20th)."""
    found = {}
    for w in load_ladder("throughput").workloads:
        if w.algo == "sac":
            w = dataclasses.replace(w, steps_per_member=SAC_GPU_STEPS)
        elif w.algo == "ppo" and w.peer:
            w = dataclasses.replace(w.scaled(PPO_GPU_SCALE), max_chunk_updates=MAX_CHUNK_UPDATES)
        found[w.name] = w.scaled(0.05) if dry else w
    return found


def rungs(plan: list[tuple[str, int]], dry: bool) -> list[tuple[Workload, int]]:
    """The plan's (workload, members), dry: members capped at 4 (repeats dropped)."""
    table, seen, out = workloads(dry), set(), []
    for name, members in plan:
        members = min(members, 4) if dry else members
        if (name, members) not in seen:
            seen.add((name, members))
            out.append((table[name], members))
    return out


LAST_CALL = "last-call"
"""In a call's work folder: the results.json and plan.json the call left, which a later call on
the same machine (the loan's second, within its warm minute) starts from, whether or not the
first call's files were adopted here in between."""


def start_results(out: Path, committed: Path, work: Path) -> None:
    """The call's results.json starts as the last call's on this machine, else the committed
    one (their rungs are not measured again)."""
    for source in (work / LAST_CALL, committed):
        if not (out / RESULTS_FILE).exists() and (source / RESULTS_FILE).is_file():
            shutil.copy(source / RESULTS_FILE, out / RESULTS_FILE)


def keep_last_call(out: Path, work: Path) -> None:
    """What this call leaves (results.json, plan.json), kept on the machine for the next call."""
    (work / LAST_CALL).mkdir(parents=True, exist_ok=True)
    for name in (RESULTS_FILE, "plan.json"):
        if (out / name).is_file():
            shutil.copy(out / name, work / LAST_CALL / name)


def ladder_step(plan: list[tuple[str, int]], args, state: dict) -> None:
    """The plan's rungs, jaxrl then rejax at each, until the call's deadline (less 20 s to
    pack what comes back)."""
    data = run_rungs(load_ladder("throughput"), rungs(plan, args.dry), args.out, peers=["rejax"],
                     peer_python=args.peer_python, timeout=RUNG_SECONDS,
                     deadline=args.deadline - 20, progress=True)
    write_report(data, args.out, "Throughput ladder on one GPU")
    done = [p for p in data["points"] if p.get("status") != "skipped"]
    state["calls"][-1]["rungs"] = {"recorded": len(done), "skipped": len(data["points"])
                                   - len(done)}
    _write_json(args.out / "plan.json", state)


def cache_check(args, state: dict) -> None:
    """`CACHE_CHECK` again, its compile from the persistent cache, once per plan."""
    results = load_results(args.out)
    name, members = CACHE_CHECK
    members = min(members, 4) if args.dry else members
    first = [p for p in results["points"] if p.get("workload") == name and p.get("status") == "ok"
             and p.get("lib") == "jaxrl" and p.get("members") == members]
    if not first or "cache_check" in state or args.deadline - time.time() < 60:
        return
    w = workloads(args.dry)[name]
    again = measure_rung(Rung(w, members), RUNG_SECONDS)
    state["cache_check"] = {
        "rung": f"{name} x{members}", "first_compile_seconds": first[-1]["compile_seconds"],
        "first_compile_source": first[-1].get("compile_source"),
        "again_compile_seconds": again.get("compile_seconds"),
        "again_compile_source": again.get("compile_source"), "again_status": again["status"],
        "cache_carried": bool(os.environ.get("GPU_CACHE_CARRIED")), "measured_at": _now()}
    print(f"gpu_plan: cache check: compile {state['cache_check']['first_compile_seconds']:.1f} s "
          f"then {again.get('compile_seconds', float('nan')):.1f} s "
          f"({again.get('compile_source')})", flush=True)


PROGRESS = "progress"
"""Under ``benchmarks/gpu-benches/`` (committed) and a call's work folder: one progress folder
per relayed bench entry not yet finished (`jaxrl.studies.bench.carry`)."""


def finished_elsewhere(benchmarks: Path, bench: Bench) -> str | None:
    """The committed report (a ``benchmarks/*/results.json`` of ``bench``'s suite at its full
    budget) that already holds ``bench``'s entry finished with at least its seeds, such as a
    Spinning Up cell the CPU ran: its path relative to ``benchmarks``, else None. A row whose
    run was set aside (its folder moved to ``superseded/`` beside the report: trained with a
    bug since fixed) does not count. A file that is not a bench's results is passed over, never
    fatal."""
    for path in sorted(benchmarks.glob("*/results.json")):
        try:
            report = read_results(path)
        except StoreError:
            continue
        if report.get("suite") != bench.suite or float(report.get("budget_scale", 1.0)) != 1.0:
            continue
        for row in report["entries"]:
            values = [v for v in row.get("per_seed") or [] if v is not None]
            set_aside = (path.parent / "superseded" / str(row.get("run_id"))).is_dir()
            if (row["entry"] == bench.entry and row.get("status") == "finished"
                    and len(values) >= bench.seeds and not set_aside):
                return str(path.relative_to(benchmarks))
    return None


def bench_command(bench: Bench, folder: Path, dry: bool) -> list[str]:
    """The `jaxrl bench` of ``bench`` into ``folder``; dry: 2 seeds at a thousandth of the
    budget."""
    return [sys.executable, "-m", "jaxrl.cli", "bench", bench.suite, "--only", bench.entry,
            "--out", str(folder), "--no-progress",
            *(("--seeds", "2", "--budget-scale", "0.001") if dry else ("--seeds", str(bench.seeds)))]


def smoke_benches() -> list[Bench]:
    """The first `BENCHES` entry of each suite, in the plan's order (the suites differ in what
    they import; the algorithms are the engine's, trained in every test run)."""
    suites: dict[str, Bench] = {}
    for bench in BENCHES:
        suites.setdefault(bench.suite, bench)
    return list(suites.values())


def bench_smoke(args) -> int:
    """Each `smoke_benches` entry at the dry size, with no deadline, in the calls' Python and
    path: that every kind of bench the plan holds imports and trains there (a dry run's calls
    reach only the first few). Writes ``bench-smoke.json`` into ``--out`` after each; exit 1
    when one failed."""
    args.out.mkdir(parents=True, exist_ok=True)
    found = {}
    for bench in smoke_benches():
        folder = args.work / "bench-smoke" / bench.slug
        started = time.time()
        proc = subprocess.run(bench_command(bench, folder, dry=True), capture_output=True,
                              text=True)
        ok = proc.returncode == 0 and (folder / "results.json").is_file()
        last = _last_line(proc.stderr)
        found[bench.slug] = {"status": "finished" if ok else "failed",
                             "reason": "" if ok else f"exit {proc.returncode}: {last}",
                             "seconds": round(time.time() - started, 1), "at": _now()}
        print(f"gpu_plan: smoke {bench.entry}: {found[bench.slug]['status']} "
              f"{found[bench.slug]['reason']}", flush=True)
        _write_json(args.out / "bench-smoke.json", found)
    return 0 if all(r["status"] == "finished" for r in found.values()) else 1


def bench_step(args, state: dict, committed_benches: Path) -> None:
    """The `BENCHES` entries at full budget, each its own `jaxrl bench` given the time left. A
    relayed entry checkpoints every chunk into its progress folder, started from the committed
    one, so an entry the deadline cuts goes on in the next call; one that is not relayed and
    does not fit the time left is skipped (recorded with its expected minutes). An entry a
    committed report already holds finished (`finished_elsewhere`) is not run again."""
    benches = state.setdefault("benches", {})
    for bench in BENCHES:
        slug = bench.slug
        if (committed_benches / slug / "results.json").is_file() \
                or benches.get(slug, {}).get("status") == "finished":
            continue
        elsewhere = finished_elsewhere(committed_benches.parent, bench)
        if elsewhere is not None:
            benches[slug] = {"status": "measured elsewhere", "reason": f"finished in {elsewhere}"}
            continue
        left = args.deadline - 20 - time.time()
        if left < 60 or (not bench.relay and not args.dry and left < 60 * bench.minutes):
            benches[slug] = {**benches.get(slug, {}), "status": "skipped",
                             "reason": f"the call's deadline: {left:.0f} s left of the "
                                       f"{bench.minutes:g} min it needs"}
            continue
        folder = args.work / "benches" / slug
        cmd = bench_command(bench, folder, args.dry)
        env = dict(os.environ)
        if bench.relay:
            progress = args.work / PROGRESS / slug
            committed = committed_benches / PROGRESS / slug
            if committed.is_dir() and not progress.exists():
                shutil.copytree(committed, progress)
            cmd += ["--checkpoint-every", "1", "--resume-from", str(progress),
                    "--runs-dir", str(args.work / "runs")]
            env["JAXRL_PROGRESS_EVERY"] = "0"  # the folder after every checkpoint
        started = time.time()
        print(f"gpu_plan: bench {bench.entry} ({left:.0f} s left)", flush=True)
        try:
            proc = subprocess.run(cmd, timeout=left, capture_output=True, text=True, env=env)
            out, err = _text(proc.stdout), _text(proc.stderr)
            sys.stdout.write(out + err)  # into the call's plan.log, as it was
            code = proc.returncode
            status = "finished" if code == 0 and (folder / "results.json").is_file() else "failed"
            last = _last_line(err)
            reason = "" if status == "finished" else f"exit {code}: {last}"
        except subprocess.TimeoutExpired as cut:
            sys.stdout.write(_text(cut.stdout) + _text(cut.stderr))
            status = "relayed" if bench.relay else "skipped"
            reason = f"cut after {time.time() - started:.0f} s"
        seconds = round(time.time() - started, 1)
        benches[slug] = {"status": status, "reason": reason, "seconds": seconds,
                         "seconds_in_all": round(benches.get(slug, {}).get("seconds_in_all", 0)
                                                 + seconds, 1),
                         "expected_minutes": bench.minutes, "at": _now()}
        print(f"gpu_plan: bench {bench.entry}: {status} {reason}", flush=True)


def _last_line(text: str) -> str:
    """A child's last stderr line (its error, as a step's reason), at most 300 characters."""
    return (text.strip().splitlines() or [""])[-1][:300]


def _text(output) -> str:
    """What a cut child wrote (``TimeoutExpired`` keeps bytes, or None)."""
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def slowest_rung(data: dict) -> tuple[str, int, float] | None:
    """``(workload, members, ratio)`` where jaxrl's whole-run rate over rejax's is lowest (at
    most 1,024 members: a short trace), or None without a paired rung."""
    ok = {(p["lib"], p["workload"], p["members"]): whole_run_rate(p)
          for p in data["points"] if p.get("status") == "ok"}
    ratios = [(rate / ok[("rejax", w, m)], w, m) for (lib, w, m), rate in ok.items()
              if lib == "jaxrl" and m <= 1024 and ok.get(("rejax", w, m))]
    if not ratios:
        return None
    ratio, workload, members = min(ratios)
    return workload, members, ratio


PROFILE_SCALE = 0.25
"""The profiled run's budget, as a share of its rung's: a quarter (about 2-8 chunks) shows the
first chunk (cold, with the init program's run) beside steady ones. The whole rung under the
profiler did not fit: on 2026-11-29 jaxrl's brax hopper at 256 members (8 chunks, 12.6 s
untraced) was still tracing when the call's 111 s ran out."""


def profile_step(args, state: dict) -> None:
    """After the headline and the cache check, with a minute to spare: the rung where jaxrl
    trails rejax most, again, under `jax.profiler`, jaxrl's run then rejax's (profile.tgz;
    TensorBoard's or Perfetto's trace viewer reads it), each summarized in plan.json
    (`trace_summary`): the two libraries' kernel counts and how busy each kept the device, side
    by side. A library's run the deadline cut is run by the next call, on the same rung."""
    done = state.get("profile", {})
    if os.environ.get("GPU_PLAN_NO_PROFILE"):  # a call that puts results first
        return
    if all(done.get(lib, {}).get("status") == "ok" for lib in ("jaxrl", "rejax")):
        return
    if "rung" in done:  # a later call finishes the rung an earlier one started
        workload, count = done["rung"].rsplit(" x", 1)
        members, ratio = int(count), done["ratio_to_rejax"]
    elif (found := slowest_rung(load_results(args.out))) is not None:
        workload, members, ratio = found
    else:
        return
    if args.deadline - 20 - time.time() < 60:
        return
    w = workloads(args.dry)[workload].scaled(PROFILE_SCALE)
    state["profile"] = {**done, "rung": f"{workload} x{members}", "ratio_to_rejax": round(ratio, 3),
                        "at": _now()}
    for lib in ("jaxrl", "rejax"):
        left = args.deadline - 20 - time.time()
        if state["profile"].get(lib, {}).get("status") == "ok":
            continue
        if left < 30:
            state["profile"][lib] = {"status": "skipped", "reason": "the call's deadline"}
            continue
        trace = args.work / "profile" / lib
        record = measure_rung(Rung(w, members, lib), min(RUNG_SECONDS, left), args.peer_python,
                              env={**os.environ, PROFILE_VAR: str(trace)})
        state["profile"][lib] = {"status": record["status"], "reason": record.get("reason", ""),
                                 **trace_summary(trace)}
        print(f"gpu_plan: profiled {lib} {workload} x{members} ({ratio:.2f}x rejax): "
              f"{record['status']}", flush=True)


TIMELINE = "ppo-cartpole-2048"
"""The `experiments/device_timeline.py` workload the plan runs on the GPU (`timeline_step`)."""


TIMELINE_TRIES = 2
"""A failed timeline is tried again by a later call, once: the third loan's failed without its
reason, which the next try keeps."""


def timeline_step(args, state: dict) -> None:
    """Once per plan, after the profile: the device's timeline between chunks on the GPU
    (`experiments/device_timeline.py`, PPO CartPole at 2,048 members, 12 chunks with
    evaluations and checkpoints) into timeline.json in --out: the idle share between chunks, and
    whether a chunk's launch returns before the chunk has run (``dispatch_blocking_s``). The
    first loan at 16 times the budget suggests it does not: jaxrl's first chunk took 2.1-2.2
    times a later one on all four PPO rungs, as a first chunk whose metrics wait for the chunk
    launched behind it would (benchmarks/throughput-gpu/NOTES.md). At most `TIMELINE_TRIES`
    tries; one the call's deadline cut (``cut``) does not count."""
    left = args.deadline - 20 - time.time()
    earlier = state.get("timeline", {})
    tries = earlier.get("tries", 1 if earlier else 0) - bool(earlier.get("cut"))  # not a cut one
    if earlier.get("status") == "ok" or tries >= TIMELINE_TRIES or left < 90:
        return
    out = args.out / "timeline.json"
    cmd = [sys.executable, str(args.root / "experiments" / "device_timeline.py"),
           "--workload", TIMELINE, "--out", str(out), "--note", "the GPU plan"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=left, cwd=args.root)
        why = _last_line(proc.stderr)
        ok = proc.returncode == 0 and out.is_file()
    except subprocess.TimeoutExpired:
        ok, why = False, f"timed out after {left:.0f} s"
    cut = not ok and why.startswith("timed out")  # only the call's deadline bounds it
    state["timeline"] = {"status": "ok" if ok else "failed", "at": _now(), "tries": tries + 1,
                         **({} if ok else {"reason": why}), **({"cut": True} if cut else {})}
    print(f"gpu_plan: device timeline {TIMELINE}: {state['timeline']['status']}", flush=True)


SAC_DRAW = ("sac-brax-hopper", 256)
"""The rung where `sac_draw_step` runs rejax's SAC with jaxrl's replay draw: the headline's."""


def sac_draw_step(args, state: dict) -> None:
    """Once per plan, after the timeline: rejax's SAC at the headline's 256 members (dry: 2)
    with its replay draw swapped for jaxrl's (experiments/peers/rejax_point.py
    ``--draw-with-replacement``), its point kept in plan.json as ``sac_draw``. Beside the
    headline's rejax SAC rung it measures how much of jaxrl's SAC lead on the GPU is rejax's
    draw: on this CPU at one member the draw was 92% of rejax's run and the whole of jaxrl's
    lead (benchmarks/sac-ablation-cpu/NOTES.md). A run the call's deadline cut (``cut``) is run
    again by a later call; one that failed or ran past its own cap is not."""
    left = args.deadline - 20 - time.time()
    if ("sac_draw" in state and not state["sac_draw"].get("cut")) or left < 90:
        return
    name, members = SAC_DRAW
    members = min(members, 2) if args.dry else members
    w = workloads(args.dry)[name]
    cmd = [args.peer_python, str(args.root / "experiments" / "peers" / "rejax_point.py"), name,
           str(members), str(w.steps_per_member), "--draw-with-replacement"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=min(RUNG_SECONDS, left), cwd=args.root)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        point = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
        why = _last_line(proc.stderr)
    except subprocess.TimeoutExpired:
        point, why = None, f"timed out after {min(RUNG_SECONDS, left):.0f} s"
    cut = point is None and why.startswith("timed out") and left < RUNG_SECONDS
    state["sac_draw"] = ({"status": "ok", "at": _now(), "point": point} if point is not None
                         else {"status": "failed", "at": _now(), "reason": why,
                               **({"cut": True} if cut else {})})
    print(f"gpu_plan: rejax SAC with jaxrl's draw x{members}: {state['sac_draw']['status']}",
          flush=True)


SAC_PATCHES = ("2-no-per-step-diagnostics", "3-no-staleness", "4-no-global-norm-clip")
"""The CPU ablation's patches that `sac_cost_step` applies together: no per-step diagnostics,
no ``sample_staleness``, no global-norm clip (each one's cost on the CPU:
benchmarks/sac-ablation-cpu/NOTES.md)."""
PATCHES = Path("benchmarks") / "sac-ablation-cpu" / "patches"


def sac_cost_step(args, state: dict) -> None:
    """Once per plan, after `sac_draw_step`: jaxrl's SAC at the same rung (dry: 2 members),
    each in a fresh process, kept in plan.json as ``sac_cost``: as it ships; with `SAC_PATCHES`
    applied to a copy of the package (what the diagnostics, the staleness and the clip cost on
    the GPU); and as it ships once more under `jax.profiler` at `PROFILE_SCALE` of the rung, its
    kernels summarized (`trace_summary`'s ``device_top``). On the third loan jaxrl's SAC ran
    0.44x rejax's with jaxrl's draw; this step says where that goes."""
    done = state.setdefault("sac_cost", {})
    name, members = SAC_DRAW
    members = min(members, 2) if args.dry else members
    w = workloads(args.dry)[name]
    trace = args.work / "profile-sac"
    variants = {"shipped": (None, w, {}),
                "patches 2-4": (args.work / "sac-patched", w, {}),
                "profiled": (None, w.scaled(PROFILE_SCALE), {PROFILE_VAR: str(trace)})}
    for label, (code, workload, extra) in variants.items():
        left = args.deadline - 20 - time.time()
        if done.get(label, {}).get("status") == "ok" or left < 90:
            continue
        try:
            if code is not None and not (code / "jaxrl").is_dir():
                patched_package(args.root, code, SAC_PATCHES)
        except (OSError, ValueError) as err:
            done[label] = {"status": "failed", "reason": str(err)[:300], "at": _now()}
            continue
        record = measure_rung(Rung(workload, members, "jaxrl"), min(RUNG_SECONDS, left),
                              env={**os.environ, **extra}, code=code)
        done[label] = {"status": record["status"], "reason": record.get("reason", ""),
                       "at": _now(), "point": record,
                       **(trace_summary(trace) if label == "profiled" else {})}
        _write_json(args.out / "plan.json", state)
        print(f"gpu_plan: jaxrl SAC x{members}, {label}: {record['status']}", flush=True)


REPEATS = [("ppo-brax-hopper", 256)]
"""The headline's PPO rungs that `repeat_step` runs `REPEAT_RUNS` times before the benches: the
one where jaxrl trailed most (0.846x rejax on the third loan), after the change that removed
239 of its kernels an update (benchmarks/gpu-hlo-cpu/NOTES.md)."""
REPEATS_LATER = [("ppo-breakout-minatar", 256), ("ppo-cartpole", 2048), ("ppo-cartpole", 1)]
"""The other PPO rungs of the headline, `REPEAT_RUNS` times each after the benches."""
REPEAT_RUNS = 3


def repeat_step(plan: list[tuple[str, int]], args, state: dict) -> None:
    """Each of ``plan``'s rungs (dry: members capped at 4) run `REPEAT_RUNS` times at this
    commit, jaxrl then rejax, each in a fresh process, so that a rung's ratio comes with its
    spread (issue 76 asks 3 runs a rung). Kept in plan.json as ``repeats[commit][rung]``: one
    entry a run, with both records and their whole-run ratio; a run the deadline cut is run
    again by a later call, and another commit's runs are kept apart from this one's. A rung
    whose runs fail `REPEAT_RUNS` times for another reason is given up."""
    commit = os.environ.get("JAXRL_COMMIT") or "unknown"
    table = workloads(args.dry)
    for name, members in plan:
        members = min(members, 4) if args.dry else members
        runs = state.setdefault("repeats", {}).setdefault(commit, {}).setdefault(
            f"{name} x{members}", [])
        while sum(run.get("status") == "ok" for run in runs) < REPEAT_RUNS:
            if args.deadline - 20 - time.time() < 90:
                return
            run = {"at": _now()}
            for lib in ("jaxrl", "rejax"):
                left = args.deadline - 20 - time.time()
                run[lib] = measure_rung(Rung(table[name], members, lib),
                                        min(RUNG_SECONDS, max(left, 1)),
                                        peer_python=args.peer_python)
            ok = all(run[lib].get("status") == "ok" for lib in ("jaxrl", "rejax"))
            run["status"] = "ok" if ok else "failed"
            if ok:
                run["ratio"] = whole_run_rate(run["jaxrl"]) / whole_run_rate(run["rejax"])
            runs.append(run)
            _write_json(args.out / "plan.json", state)
            ratio = f" ({run['ratio']:.3f}x rejax)" if ok else ""
            print(f"gpu_plan: {name} x{members}, run {len(runs)}: {run['status']}{ratio}",
                  flush=True)
            if not ok and sum(_faulted(r) for r in runs) >= REPEAT_RUNS:
                break  # a rung that keeps failing does not take the call


def _faulted(run: dict) -> bool:
    """A repeat's run that failed for a reason other than the time it was given (a pair the
    call's deadline cut is run again by the next call, however often)."""
    reasons = [run[lib].get("reason", "") for lib in ("jaxrl", "rejax")
               if run.get(lib, {}).get("status") == "failed"]
    return run.get("status") != "ok" and not all("timed out" in why for why in reasons)


def patched_package(root: Path, dest: Path, patches: tuple[str, ...]) -> None:
    """A copy of ``root``'s ``jaxrl`` and ``envs`` packages in ``dest`` with ``patches`` (names
    in `PATCHES`, applied in order) applied: what a rung imports with ``code=dest``."""
    for package in ("jaxrl", "envs"):
        if (root / package).is_dir():
            shutil.copytree(root / package, dest / package,
                            ignore=shutil.ignore_patterns("__pycache__"))
    for name in patches:
        apply_diff(dest, (root / PATCHES / f"{name}.diff").read_text())


def apply_diff(root: Path, diff: str) -> list[str]:
    """Apply a unified diff to the files under ``root``, each hunk where its old lines occur
    exactly once (the lent machine has neither `patch` nor `git`); the paths it changed. A hunk
    that does not match raises ValueError naming the file."""
    files: list[tuple[str, list[tuple[list[str], list[str]]]]] = []
    lines = diff.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            continue
        if line.startswith("+++ "):
            files.append((line[4:].split("\t")[0].removeprefix("b/"), []))
        elif line.startswith("@@"):
            files[-1][1].append(([], []))
        elif files and files[-1][1] and not line.startswith("\\"):
            old, new = files[-1][1][-1]
            tag, body = line[:1] or " ", line[1:]
            if tag != "+":
                old.append(body)
            if tag != "-":
                new.append(body)
    for path, hunks in files:
        text = (root / path).read_text().split("\n")
        for old, new in hunks:
            at = [i for i in range(len(text) - len(old) + 1) if text[i:i + len(old)] == old]
            if len(at) != 1:
                raise ValueError(f"{path}: a hunk's {len(old)} old lines occur {len(at)} times")
            text[at[0]:at[0] + len(old)] = new
        (root / path).write_text("\n".join(text))
    return [path for path, _ in files]


def trace_summary(trace: Path, top: int = 30) -> dict:
    """Where the traced run's time went, read from the whole XSpace (``*.xplane.pb``; the
    trace-viewer JSON beside it keeps only its first 1,000,000 events, which a run of short ops
    passes in a second): ``top``, the events summed by (plane, line, name), largest first; and
    ``device_top``, the device planes' events (kernels, copies) summed by name over all streams,
    largest first, which the host's compile events cannot crowd out of ``top``; and ``lines``,
    each (plane, line)'s summed event time, event count and span (first start to last end). On a GPU plane a stream line's events are its kernels, so its busy seconds over its
    span is how busy the device kept that stream. Kept in plan.json whether or not the trace
    itself fits what comes back."""
    from jax.profiler import ProfileData

    paths = sorted(trace.rglob("*.xplane.pb"))
    if not paths:
        return {"top": [], "device_top": [], "lines": []}
    totals: dict[tuple[str, str, str], list[float]] = {}
    lines = []
    for plane in ProfileData.from_file(str(paths[-1])).planes:
        for line in plane.lines:
            busy, count, first, last = 0.0, 0, None, None
            for event in line.events:
                entry = totals.setdefault((plane.name, line.name, event.name), [0.0, 0])
                entry[0] += event.duration_ns / 1e9
                entry[1] += 1
                busy += event.duration_ns / 1e9
                count += 1
                first = event.start_ns if first is None else min(first, event.start_ns)
                last = max(last or 0.0, event.start_ns + event.duration_ns)
            if count:
                lines.append({"plane": plane.name, "line": line.name[:120],
                              "busy_seconds": round(busy, 4), "events": count,
                              "span_seconds": round((last - first) / 1e9, 4)})
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]
    kernels: dict[str, list[float]] = {}  # the device planes' events by name, streams merged
    for (p, _, n), (sec, c) in totals.items():
        if p.startswith("/device:"):
            entry = kernels.setdefault(n, [0.0, 0])
            entry[0] += sec
            entry[1] += c
    return {"top": [{"plane": p, "line": ln[:120], "name": n[:200], "seconds": round(sec, 4),
                     "count": c} for (p, ln, n), (sec, c) in ranked],
            "device_top": [{"name": n[:200], "seconds": round(sec, 4), "count": c}
                           for n, (sec, c) in sorted(kernels.items(),
                                                     key=lambda kv: -kv[1][0])[:2 * top]],
            "lines": sorted(lines, key=lambda x: -x["busy_seconds"])}


def pack(args, state: dict) -> None:
    """benches.tgz (finished benches' reports, and the progress folders of relayed entries not
    finished, as many as fit) and xla-cache.tgz into --out (each under the 16 MiB a file may
    weigh)."""
    done = [d for d in (args.work / "benches").glob("*") if (d / "results.json").is_file()]
    relayed = sorted(p for p in (args.work / PROGRESS).glob("*")
                     if p.is_dir() and not (args.work / "benches" / p.name / "results.json").is_file())
    if done or relayed:
        _pack_benches(args.out / "benches.tgz", done, relayed, state)
    profile = args.work / "profile"
    if profile.is_dir():  # both traces, else jaxrl's, else its viewer's file alone
        viewer = sorted((profile / "jaxrl").glob("plugins/profile/*/*.trace.json.gz"))
        state["profile"]["packed"] = _pack_within(
            args.out / "profile.tgz", [(profile, "profile"), (profile / "jaxrl", "profile/jaxrl"),
                                       *[(t, f"profile/jaxrl/{t.name}") for t in viewer[-1:]]])
    cache = args.work / "xla-cache"
    if cache.is_dir():  # both libraries' caches, else jaxrl's alone, where it fits
        state["calls"][-1]["cache"] = _pack_within(
            args.out / "xla-cache.tgz", [(cache, "xla-cache"), (cache / "jaxrl", "xla-cache/jaxrl")])


def _pack_benches(target: Path, done: list[Path], relayed: list[Path], state: dict) -> None:
    """The finished reports always; then each relayed progress folder while the archive stays
    under `OUT_LIMIT` (one that does not fit is named in plan.json: that entry starts over)."""
    kept = []
    for count in range(len(relayed), -1, -1):
        with tarfile.open(target, "w:gz") as tar:
            for d in done:
                for name in ("results.json", "report.md", "curves.png"):
                    if (d / name).is_file():
                        tar.add(d / name, arcname=f"{d.name}/{name}")
            for p in relayed[:count]:
                tar.add(p, arcname=f"{PROGRESS}/{p.name}")
        if target.stat().st_size <= OUT_LIMIT:
            kept = [p.name for p in relayed[:count]]
            break
    for p in relayed:
        entry = state.setdefault("benches", {}).setdefault(p.name, {})
        entry["progress_back"] = p.name in kept


def _pack_within(target: Path, choices: list[tuple[Path, str]]) -> str:
    """The first of ``choices`` (a folder or file, its name in the archive) whose archive fits
    `OUT_LIMIT`."""
    for folder, name in choices:
        if not folder.exists():
            continue
        with tarfile.open(target, "w:gz") as tar:
            tar.add(folder, arcname=name)
        size = target.stat().st_size
        if size <= OUT_LIMIT:
            return f"{name}: {size / 2**20:.1f} MiB"
    target.unlink(missing_ok=True)
    return "not brought back: over 16 MiB"


def run_call(phase: str, args) -> int:
    args.out.mkdir(parents=True, exist_ok=True)
    args.work.mkdir(parents=True, exist_ok=True)
    committed = args.root / COMMITTED
    start_results(args.out, committed, args.work)
    state = (_read_json(args.out / "plan.json", None)
             or _read_json(args.work / LAST_CALL / "plan.json", None)
             or _read_json(committed / "plan.json", {}))
    setup_file = args.out / "setup.json"
    state.setdefault("calls", []).append({
        "setup": _read_json(setup_file, None),
        "phase": phase, "started": _now(), "host": os.uname().nodename, "dry": args.dry,
        "commit": os.environ.get("JAXRL_COMMIT"),
        "seconds_given": round(args.deadline - time.time())})
    _write_json(args.out / "plan.json", state)
    setup_file.unlink(missing_ok=True)  # now in plan.json: one file fewer to bring back
    try:
        # one order of value for every call, each taking up where the last left off, until the
        # call's deadline: the headline, the cache check, the profile of the rung where jaxrl
        # trails most (why, before how far the ladder goes), the results at the references'
        # budgets (the benches, relayed from call to call), the rest of the ladder
        ladder_step(FIRST, args, state)
        cache_check(args, state)
        profile_step(args, state)
        timeline_step(args, state)
        sac_draw_step(args, state)
        sac_cost_step(args, state)
        repeat_step(REPEATS, args, state)
        _write_json(args.out / "plan.json", state)
        bench_step(args, state, args.root / BENCHED)
        _write_json(args.out / "plan.json", state)
        repeat_step(REPEATS_LATER, args, state)
        ladder_step(SECOND, args, state)
    finally:
        with contextlib.suppress(OSError):
            pack(args, state)
        state["calls"][-1]["ended"] = _now()
        _write_json(args.out / "plan.json", state)
        keep_last_call(args.out, args.work)
    return 0


VERSIONS = """
import json
from importlib.metadata import PackageNotFoundError, version
import jax
def v(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return None
d = jax.devices()[0]
print(json.dumps({"device": f"{d.platform}:{d.id}", "device_kind": getattr(d, "device_kind", ""),
                  "devices": jax.device_count(), **{n: v(n) for n in (
                      "jax", "jaxlib", "flax", "optax", "chex", "gymnax", "brax", "mujoco",
                      "mujoco-mjx", "rejax", "distrax", "jax-cuda12-plugin", "jax-cuda12-pjrt",
                      "jax-cuda13-plugin", "jax-cuda13-pjrt")}}))
"""
"""What each library's Python imports, printed as one JSON line (`setup`)."""


def setup(args) -> int:
    """What the machine is, the versions each library runs on, and how long the install took."""
    info = {"install_seconds": args.install_seconds, "host": os.uname().nodename,
            "cpu_count": os.cpu_count(), "python": sys.version.split()[0], "at": _now()}
    for lib, python in (("jaxrl", sys.executable), ("rejax", args.peer_python)):
        proc = subprocess.run([python, "-c", VERSIONS], capture_output=True, text=True,
                              timeout=120)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
        info[lib] = json.loads(lines[-1]) if lines else {
            "error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    args.out.mkdir(parents=True, exist_ok=True)
    _write_json(args.out / "setup.json", info)
    print(json.dumps(info), flush=True)
    return 0 if "error" not in info["jaxrl"] else 1


def adopt(args) -> int:
    """Here, after a call: what came back into the committed folders (results, plan, report
    and figure re-rendered), finished benches into benchmarks/gpu-benches/, the cache into
    .gpu-cache/ for the next call (ignored by git, carried)."""
    src, root = Path(args.files_at), Path(args.into)
    into = root / COMMITTED
    into.mkdir(parents=True, exist_ok=True)
    for name in ("results.json", "plan.json", "plan.log"):
        if (src / name).is_file():
            if name == "plan.log" and (into / name).is_file():
                with open(into / name, "a") as f:
                    f.write((src / name).read_text())
            else:
                shutil.copy(src / name, into / name)
    if (into / RESULTS_FILE).is_file():
        data = load_results(into)
        write_report(data, into, "Throughput ladder on one GPU")
        write_figure(data, into, "Throughput ladder on one GPU")
    if (src / "benches.tgz").is_file():
        with tarfile.open(src / "benches.tgz") as tar:
            names = tar.getnames()
            for slug in {n.split("/")[1] for n in names if n.startswith(PROGRESS + "/")
                         and n.count("/") >= 1}:  # a newer progress folder replaces the old
                shutil.rmtree(root / BENCHED / PROGRESS / slug, ignore_errors=True)
            tar.extractall(root / BENCHED, filter="data")
        for finished in (root / BENCHED).glob("*/results.json"):  # its relay is over
            shutil.rmtree(root / BENCHED / PROGRESS / finished.parent.name, ignore_errors=True)
    if (src / "timeline.json").is_file():
        (root / TIMELINE_COMMITTED).mkdir(parents=True, exist_ok=True)
        shutil.copy(src / "timeline.json", root / TIMELINE_COMMITTED / "timeline.json")
    if (src / "profile.tgz").is_file():  # a jax.profiler trace: looked at, not committed
        with tarfile.open(src / "profile.tgz") as tar:
            tar.extractall(root / ".gpu-profile", filter="data")
    if (src / "xla-cache.tgz").is_file():
        shutil.rmtree(root / ".gpu-cache", ignore_errors=True)
        with tarfile.open(src / "xla-cache.tgz") as tar:
            tar.extractall(root / ".gpu-cache", filter="data")
    print(f"gpu_plan: adopted {', '.join(sorted(p.name for p in src.iterdir()))} into {into}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    for phase in ("first", "second"):
        p = sub.add_parser(phase)
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--work", type=Path, required=True)
        p.add_argument("--deadline", type=float, required=True, help="epoch seconds")
        p.add_argument("--peer-python", required=True)
        p.add_argument("--dry", action="store_true")
        p.add_argument("--root", type=Path, default=REPO,
                       help="the tree whose benchmarks/ hold what earlier loans measured")
    s = sub.add_parser("setup")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--peer-python", required=True)
    s.add_argument("--install-seconds", type=float, default=None)
    b = sub.add_parser("bench-smoke")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--work", type=Path, required=True)
    a = sub.add_parser("adopt")
    a.add_argument("files_at")
    a.add_argument("--into", default=str(REPO))
    args = parser.parse_args(argv)
    if args.verb == "setup":
        return setup(args)
    if args.verb == "adopt":
        return adopt(args)
    if args.verb == "bench-smoke":
        return bench_smoke(args)
    return run_call(args.verb, args)


if __name__ == "__main__":
    raise SystemExit(main())
