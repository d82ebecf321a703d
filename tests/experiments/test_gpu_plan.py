"""The GPU plan's calls: one killed at its limit leaves a readable results.json, and the next
call resumes from it without measuring anything twice (no wheels: this environment's Python,
the plan's dry sizes on the CPU)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "experiments" / "gpu_plan.py"
LIMITS = REPO / "experiments" / "gpu_plan_limits.py"


def _call(phase: str, out: Path, work: Path, root: Path, seconds: float) -> subprocess.Popen:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAXRL_COMMIT": "feedbeef",
           "JAXRL_CPU_DEVICES": "1"}
    return subprocess.Popen(
        [sys.executable, str(PLAN), phase, "--dry", "--out", str(out), "--work", str(work),
         "--root", str(root), "--deadline", str(time.time() + seconds),
         "--peer-python", sys.executable],  # no rejax here: its rungs fail in one line
        env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)


def _ok_points(path: Path) -> list[dict]:
    try:
        points = json.loads(path.read_text())["points"]
    except (OSError, ValueError, KeyError):
        return []
    return [p for p in points if p["status"] == "ok"]


def test_a_call_killed_at_its_limit_leaves_its_results_and_the_next_call_resumes(tmp_path):
    out, root = tmp_path / "out", tmp_path / "tree"
    root.mkdir()
    proc = _call("first", out, tmp_path / "machine", root, seconds=600)
    try:
        give_up = time.time() + 240
        while not _ok_points(out / "results.json") and time.time() < give_up:
            assert proc.poll() is None, "the call ended before measuring a rung"
            time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # as the tool kills a call at its limit
        proc.wait()
    measured = _ok_points(out / "results.json")
    assert measured and measured[0]["commit"]  # git's, or $JAXRL_COMMIT without a .git
    assert json.loads((out / "plan.json").read_text())["calls"][0]["phase"] == "first"
    back = subprocess.run([sys.executable, str(LIMITS), "out", str(out), "--needs",
                           "results.json", "plan.json"], capture_output=True, text=True)
    assert back.returncode == 0, back.stdout  # what is left there comes back whole

    # the next call, given too little time to measure anything, keeps every rung it has
    again = _call("first", out, tmp_path / "machine2", root, seconds=25)
    assert again.wait(timeout=120) == 0
    points = json.loads((out / "results.json").read_text())["points"]
    keys = [(p["lib"], p["workload"], p["members"]) for p in points]
    assert len(keys) == len(set(keys))  # nothing listed twice
    kept = {(p["lib"], p["workload"], p["members"]): p for p in points}
    for p in measured:  # untouched: not measured again
        assert kept[(p["lib"], p["workload"], p["members"])] == p
    left = [p for p in points if p["status"] == "skipped"]
    assert left and all("deadline" in p["reason"] for p in left)
    calls = json.loads((out / "plan.json").read_text())["calls"]
    assert [c["phase"] for c in calls] == ["first", "first"] and "ended" in calls[1]


def test_the_trace_summary_reads_every_event_of_the_xspace(tmp_path):
    import jax
    import jax.numpy as jnp

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    f = jax.jit(lambda x: jnp.sin(x) @ x)
    x = jnp.ones((64, 64))
    f(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path)):
        for _ in range(5):
            f(x).block_until_ready()
    summary = plan.trace_summary(tmp_path, top=5)
    assert 0 < len(summary["top"]) <= 5
    seconds = [e["seconds"] for e in summary["top"]]
    assert seconds == sorted(seconds, reverse=True)
    assert sum(line["events"] for line in summary["lines"]) >= sum(e["count"] for e in
                                                                     summary["top"])
    assert all(line["span_seconds"] >= 0 for line in summary["lines"])
    assert plan.trace_summary(tmp_path / "none") == {"top": [], "device_top": [], "lines": []}


def test_the_trace_summary_ranks_the_device_kernels_apart_from_the_host(tmp_path, monkeypatch):
    """A GPU trace's host lines (compiling, tens of seconds) crowd its kernels out of ``top``;
    ``device_top`` sums the device planes' events by name over all their streams."""
    from types import SimpleNamespace as Ns

    import jax.profiler

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    ev = lambda name, start, ns: Ns(name=name, start_ns=start, duration_ns=ns)
    planes = [Ns(name="/host:CPU", lines=[Ns(name="python3", events=[ev("compile", 0, 9e9)])]),
              Ns(name="/device:GPU:0", lines=[
                  Ns(name="Stream #14", events=[ev("fusion_1", 0, 2e6), ev("gemm", 5, 1e6),
                                                ev("fusion_1", 9, 2e6)]),
                  Ns(name="Stream #15", events=[ev("gemm", 3, 4e6)])])]
    monkeypatch.setattr(jax.profiler, "ProfileData",
                        Ns(from_file=lambda path: Ns(planes=planes)))
    (tmp_path / "t.xplane.pb").write_bytes(b"")
    summary = plan.trace_summary(tmp_path, top=1)
    assert [e["name"] for e in summary["top"]] == ["compile"]
    assert summary["device_top"] == [{"name": "gemm", "seconds": 0.005, "count": 2},
                                     {"name": "fusion_1", "seconds": 0.004, "count": 2}]


def test_the_plan_runs_the_peer_ppo_workloads_at_a_gpu_budget_in_default_chunks():
    from jaxrl.engine.spec import MAX_CHUNK_UPDATES
    from jaxrl.studies.throughput import load_ladder
    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    cpu = {w.name: w for w in load_ladder("throughput").workloads}
    for name, w in plan.workloads(dry=False).items():
        if w.algo == "ppo" and w.peer:
            assert w.steps_per_member == plan.PPO_GPU_SCALE * cpu[name].steps_per_member
            assert w.max_chunk_updates == MAX_CHUNK_UPDATES
        elif w.algo != "sac":
            assert w == cpu[name]


def test_a_profile_cut_short_is_finished_by_the_next_call_on_the_same_rung(tmp_path, monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    measured = []

    def measure(rung, timeout, peer_python=None, env=None):
        measured.append((rung.lib, rung.workload.name, rung.members))
        return {"status": "ok"}

    monkeypatch.setattr(plan, "measure_rung", measure)
    monkeypatch.setattr(plan, "slowest_rung", lambda results: ("ppo-cartpole", 4, 0.8))
    monkeypatch.setattr(plan, "load_results", lambda out: {})
    args = argparse.Namespace(out=tmp_path, work=tmp_path, dry=True, peer_python=None,
                              deadline=time.time() + 600)
    state = {"profile": {"rung": "ppo-brax-hopper x256", "ratio_to_rejax": 0.85,
                         "jaxrl": {"status": "ok"}, "rejax": {"status": "failed"}}}
    plan.profile_step(args, state)
    assert measured == [("rejax", "ppo-brax-hopper", 256)]
    assert state["profile"]["rejax"]["status"] == "ok"
    plan.profile_step(args, state)  # both done: nothing more
    assert len(measured) == 1
    state = {}
    plan.profile_step(args, state)  # a first profile: the slowest rung, both libraries
    assert measured[1:] == [("jaxrl", "ppo-cartpole", 4), ("rejax", "ppo-cartpole", 4)]


def test_a_relayed_bench_cut_by_one_call_goes_on_in_the_next_from_its_committed_progress(
        tmp_path, monkeypatch):
    """The plumbing of the relay (the engine's resume from a progress folder is
    tests/studies/bench/test_carry.py's): a relayed entry the deadline cuts brings its progress folder
    back in benches.tgz, `adopt` commits it, the next call on another machine starts from that
    copy, and once the entry finishes its progress folder goes; an entry that cannot be relayed
    is not started when the call has less time than it needs."""
    import argparse
    import tarfile

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    monkeypatch.setattr(plan, "BENCHES", [
        plan.Bench("classic", "ppo/CartPole-v1", 2, True, 1.0, "a test"),
        plan.Bench("mujoco", "sac-3M/brax:hopper", 2, False, 30.0, "a test")])
    slug = "ppo-CartPole-v1"
    commands, outcome = [], {}

    def run(cmd, timeout, **kwargs):
        commands.append(cmd)
        progress = Path(cmd[cmd.index("--resume-from") + 1])
        progress.mkdir(parents=True, exist_ok=True)
        seen = (progress / "chunks").read_text() if (progress / "chunks").exists() else ""
        (progress / "chunks").write_text(seen + "x")
        if outcome["cut"]:
            raise subprocess.TimeoutExpired(cmd, timeout)
        folder = Path(cmd[cmd.index("--out") + 1])
        folder.mkdir(parents=True)
        (folder / "results.json").write_text("{}")
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(plan.subprocess, "run", run)
    root = tmp_path / "repo"
    (root / "benchmarks").mkdir(parents=True)

    def call(name, cut, seconds=600):
        outcome["cut"] = cut
        args = argparse.Namespace(out=tmp_path / name / "out", work=tmp_path / name / "work",
                                  dry=False, deadline=time.time() + seconds)
        args.out.mkdir(parents=True)
        state = {"calls": [{}]}
        plan.bench_step(args, state, root / plan.BENCHED)
        plan.pack(args, state)
        plan.adopt(argparse.Namespace(files_at=str(args.out), into=str(root)))
        return state

    first = call("machine1", cut=True)
    assert first["benches"][slug]["status"] == "relayed"
    assert first["benches"][slug]["progress_back"] is True
    committed = root / plan.BENCHED / plan.PROGRESS / slug
    assert (committed / "chunks").read_text() == "x"
    assert first["benches"]["sac-3M-brax-hopper"]["status"] == "skipped"  # needs 30 min
    assert len(commands) == 1  # the off-policy entry was not started
    cmd = commands[0]
    assert cmd[cmd.index("--checkpoint-every") + 1] == "1"

    second = call("machine2", cut=True)  # another machine: from the committed copy
    assert (committed / "chunks").read_text() == "xx"
    assert second["benches"][slug]["status"] == "relayed"

    third = call("machine3", cut=False)
    assert third["benches"][slug]["status"] == "finished"
    assert (root / plan.BENCHED / slug / "results.json").is_file()
    assert not committed.exists()  # the relay is over
    with tarfile.open(tmp_path / "machine3" / "out" / "benches.tgz") as tar:
        assert f"{slug}/results.json" in tar.getnames()


def test_an_entry_a_committed_report_holds_finished_is_not_run_again(tmp_path, monkeypatch):
    """A Spinning Up cell the CPU finished at its budget (its row in a committed report with 8
    seeds) costs the loan nothing; one interrupted there, one finished with fewer seeds, one of
    a smoke report, or a damaged file elsewhere leaves the entry to run."""
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    done = plan.Bench("mujoco", "trpo-3M/brax:hopper", 8, True, 2.0, "a test")
    short = plan.Bench("mujoco", "vpg-3M/brax:hopper", 8, True, 2.0, "a test")
    cut = plan.Bench("mujoco", "ppo-3M/brax:walker2d", 8, True, 2.0, "a test")
    smoke = plan.Bench("mujoco", "ppo-3M/brax:hopper", 8, True, 2.0, "a test")
    monkeypatch.setattr(plan, "BENCHES", [done, short, cut, smoke])
    real = json.loads((REPO / "benchmarks/mujoco-cpu/results.json").read_text())
    rows = {r["entry"]: r for r in real["entries"]}

    def report(folder, scale, *entries):
        (tmp_path / "benchmarks" / folder).mkdir(parents=True)
        (tmp_path / "benchmarks" / folder / "results.json").write_text(json.dumps(
            {**real, "budget_scale": scale, "entries": list(entries)}))

    report("mujoco-cpu", 1.0, rows["trpo-3M/brax:hopper"],
           {**rows["vpg-3M/brax:hopper"], "per_seed": rows["vpg-3M/brax:hopper"]["per_seed"][:4]},
           {**rows["ppo-3M/brax:walker2d"], "status": "interrupted"})
    report("mujoco-smoke-cpu", 0.001, rows["ppo-3M/brax:hopper"])
    (tmp_path / "benchmarks" / "damaged").mkdir()
    (tmp_path / "benchmarks" / "damaged" / "results.json").write_text("{not json")
    assert plan.finished_elsewhere(tmp_path / "benchmarks", done) == "mujoco-cpu/results.json"
    superseded = tmp_path / "benchmarks" / "mujoco-cpu" / "superseded"
    (superseded / rows["trpo-3M/brax:hopper"]["run_id"]).mkdir(parents=True)
    assert plan.finished_elsewhere(tmp_path / "benchmarks", done) is None  # set aside: runs again
    shutil.rmtree(superseded)
    assert [plan.finished_elsewhere(tmp_path / "benchmarks", b) for b in (short, cut, smoke)] \
        == [None, None, None]
    ran = []
    monkeypatch.setattr(plan.subprocess, "run", lambda cmd, **kw: ran.append(
        cmd[cmd.index("--only") + 1]) or subprocess.CompletedProcess(cmd, 1))
    args = argparse.Namespace(out=tmp_path / "out", work=tmp_path / "work", dry=False,
                              deadline=time.time() + 600)
    state = {}
    plan.bench_step(args, state, tmp_path / "benchmarks" / plan.BENCHED.name)
    assert state["benches"][done.slug] == {"status": "measured elsewhere",
                                           "reason": "finished in mujoco-cpu/results.json"}
    assert ran == [short.entry, cut.entry, smoke.entry]


def test_the_benches_come_in_the_issues_order_with_their_minutes():
    """Results at the references' budgets after the headline: MinAtar, Playground's DM Control
    Suite, Navix, Spinning Up's off-policy cells, Craftax; each with its expected minutes and
    how they were come by; the entries that keep a replay buffer (the off-policy cells' 1M
    transitions a seed, IQN's 131,072 on Navix: far over a returned file's 16 MiB) are the
    ones not relayed."""
    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    suites = [b.suite for b in plan.BENCHES]
    order = list(dict.fromkeys(suites))
    assert order == ["minatar", "playground_dmc", "navix", "mujoco", "craftax", "craftax-rnn"]
    assert all(b.minutes > 0 and b.basis for b in plan.BENCHES)
    replay = {b.entry for b in plan.BENCHES if b.entry.split("-")[0].split("/")[0]
              in {"sac", "td3", "ddpg", "iqn"}}
    assert {b.entry for b in plan.BENCHES if not b.relay} == replay
    assert {b.suite for b in plan.BENCHES if b.entry in replay} == {"mujoco", "navix"}
    navix = {e["algo"]: e for e in yaml.safe_load(
        (Path(plan.__file__).parent / "benchmarks/navix.yaml").read_text())["entries"]}
    assert f"({navix['iqn']['config']['buffer_size']:,} transitions a seed)" in " ".join(
        b.basis for b in plan.BENCHES if b.suite == "navix")
    assert len({b.slug for b in plan.BENCHES}) == len(plan.BENCHES)


def test_the_bench_smoke_runs_one_entry_of_each_suite_at_the_dry_size(tmp_path):
    """The dry run's last step: every suite the plan's benches come from, once, its first
    entry, as a call's dry bench runs it (2 seeds, a thousandth of the budget)."""
    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    smoke = plan.smoke_benches()
    assert [b.suite for b in smoke] == list(dict.fromkeys(b.suite for b in plan.BENCHES))
    assert all(b is next(p for p in plan.BENCHES if p.suite == b.suite) for b in smoke)
    cmd = plan.bench_command(smoke[0], tmp_path / "out", dry=True)
    assert cmd[-4:] == ["--seeds", "2", "--budget-scale", "0.001"]
    assert cmd[cmd.index("--only") + 1] == smoke[0].entry


def test_navix_imports_on_the_gpu_path_with_the_wandb_stand_in_and_nothing_else(tmp_path):
    """The calls' path ends with experiments/gpu_stubs: navix imports wandb and wandb.util when
    imported (the image has no wandb), and whatever is asked of the stand-in raises."""
    script = ("import wandb, wandb.util\n"
              "try:\n    wandb.init\nexcept ImportError as err:\n    print(err)\n")
    proc = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO / "experiments" / "gpu_stubs")})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wandb.init: wandb is not installed on this machine")
    lease = (REPO / "experiments" / "gpu_lease.sh").read_text()
    assert "JAXRL_PATH=$SITE-jaxrl:$SITE-suites:$SITE-shared:$PWD:$SITE-rejax:" \
           "$PWD/experiments/gpu_stubs\n" in lease
    assert 'JAXRL_ONLY="gymnax craftax navix rlax dm-env"' in lease


def test_every_bench_the_plan_runs_is_an_entry_of_its_suite():
    from jaxrl.studies.bench.judge import suite_entries
    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    for suite in {b.suite for b in plan.BENCHES}:
        entries = suite_entries(suite)
        missing = [b.entry for b in plan.BENCHES if b.suite == suite and b.entry not in entries]
        assert not missing, (suite, missing)


def test_the_loans_second_call_starts_from_the_first_calls_results_on_the_same_machine(
        tmp_path):
    """The second call's $OUT starts empty; when nothing was adopted in between, it must still
    skip what the first call measured (on 2026-11-29 it measured the headline again)."""
    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    first_out, second_out, work, committed = (tmp_path / n for n in ("1", "2", "w", "c"))
    for d in (first_out, second_out, committed):
        d.mkdir()
    (committed / "results.json").write_text(json.dumps({"points": ["committed"]}))
    (first_out / "results.json").write_text(json.dumps({"points": ["first call"]}))
    (first_out / "plan.json").write_text(json.dumps({"calls": [{"phase": "first"}]}))
    plan.keep_last_call(first_out, work)
    plan.start_results(second_out, committed, work)
    assert json.loads((second_out / "results.json").read_text())["points"] == ["first call"]
    fresh = tmp_path / "fresh"  # a fresh machine: the committed results
    fresh.mkdir()
    plan.start_results(fresh, committed, tmp_path / "bare")
    assert json.loads((fresh / "results.json").read_text())["points"] == ["committed"]


def test_the_profiled_run_is_a_share_of_its_rung_and_can_be_left_out(tmp_path, monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    budgets = []
    monkeypatch.setattr(plan, "measure_rung", lambda rung, timeout, peer_python=None, env=None:
                        budgets.append(rung.workload.steps_per_member) or {"status": "ok"})
    monkeypatch.setattr(plan, "slowest_rung", lambda results: ("ppo-brax-hopper", 256, 0.85))
    monkeypatch.setattr(plan, "load_results", lambda out: {})
    args = argparse.Namespace(out=tmp_path, work=tmp_path, dry=False, peer_python=None,
                              deadline=time.time() + 600)
    monkeypatch.setenv("GPU_PLAN_NO_PROFILE", "1")
    plan.profile_step(args, state := {})
    assert budgets == [] and state == {}
    monkeypatch.delenv("GPU_PLAN_NO_PROFILE")
    plan.profile_step(args, state)
    rung = plan.workloads(dry=False)["ppo-brax-hopper"].steps_per_member
    assert budgets == [int(rung * plan.PROFILE_SCALE)] * 2  # jaxrl's run, then rejax's


def test_the_device_timeline_runs_once_per_plan_and_a_failure_is_one_line(tmp_path, monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    runs = []

    def run(cmd, **kw):
        runs.append(cmd)
        out = Path(cmd[cmd.index("--out") + 1])
        if len(runs) == 1:
            out.write_text("{}")
            return subprocess.CompletedProcess(cmd, 0, "", "")
        return subprocess.CompletedProcess(cmd, 1, "", "noise\nRuntimeError: no GPU left\n")

    monkeypatch.setattr(plan.subprocess, "run", run)
    args = argparse.Namespace(out=tmp_path, root=REPO, deadline=time.time() + 600)
    plan.timeline_step(args, state := {})
    plan.timeline_step(args, state)  # done: not run again
    assert len(runs) == 1 and plan.TIMELINE in runs[0] and state["timeline"]["status"] == "ok"
    plan.timeline_step(args, again := {})
    assert again["timeline"] == {"status": "failed", "at": again["timeline"]["at"], "tries": 1,
                                 "reason": "RuntimeError: no GPU left"}
    plan.timeline_step(args, again)  # a failure is tried once more, then left
    plan.timeline_step(args, again)
    assert len(runs) == 3 and again["timeline"]["tries"] == plan.TIMELINE_TRIES == 2
    plan.timeline_step(args, legacy := {"timeline": {"status": "failed", "at": "then"}})
    assert len(runs) == 4 and legacy["timeline"]["tries"] == 2  # a record from before tries
    plan.timeline_step(argparse.Namespace(out=tmp_path, root=REPO, deadline=time.time() + 60),
                       late := {})
    assert late == {}  # too little of the call left


def test_rejax_sac_with_jaxrls_draw_runs_once_per_plan_and_a_failure_is_one_line(
        tmp_path, monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    runs = []

    def run(cmd, **kw):
        runs.append(cmd)
        if len(runs) == 1:
            return subprocess.CompletedProcess(cmd, 0, 'noise\n{"status": "ok", "ablation": '
                                               '"draw_with_replacement"}\n', "")
        return subprocess.CompletedProcess(cmd, 1, "", "rejax_point: no module named rejax\n")

    monkeypatch.setattr(plan.subprocess, "run", run)
    args = argparse.Namespace(out=tmp_path, root=REPO, deadline=time.time() + 600, dry=False,
                              peer_python="/peer/python")
    plan.sac_draw_step(args, state := {})
    plan.sac_draw_step(args, state)  # done: not run again
    assert len(runs) == 1 and runs[0][0] == "/peer/python"
    assert runs[0][2:] == ["sac-brax-hopper", "256", str(plan.SAC_GPU_STEPS),
                           "--draw-with-replacement"]
    assert state["sac_draw"]["point"] == {"status": "ok", "ablation": "draw_with_replacement"}
    plan.sac_draw_step(args, again := {})
    assert again["sac_draw"]["reason"] == "rejax_point: no module named rejax"
    plan.sac_draw_step(argparse.Namespace(**{**vars(args), "deadline": time.time() + 60}),
                       late := {})
    assert late == {}  # too little of the call left


def test_a_timeline_or_sac_draw_the_calls_deadline_cut_is_run_again_by_a_later_call(
        tmp_path, monkeypatch):
    """The dry run of 2026-12-06 found rejax's SAC with jaxrl's draw cut by a call's deadline
    and never tried again: a cut is not a failure of the step. One cut by its own cap, or
    failed, is not run again; a cut timeline try is not counted against its tries."""
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    runs = []

    def cut(cmd, timeout, **kw):
        runs.append(timeout)
        raise subprocess.TimeoutExpired(cmd, timeout)

    monkeypatch.setattr(plan.subprocess, "run", cut)
    late = argparse.Namespace(out=tmp_path, root=REPO, deadline=time.time() + 200, dry=False,
                              peer_python="/peer/python")
    plan.sac_draw_step(late, state := {})
    assert state["sac_draw"]["cut"] and runs[-1] < plan.RUNG_SECONDS
    plan.sac_draw_step(late, state)
    assert len(runs) == 2  # run again
    roomy = argparse.Namespace(**{**vars(late), "deadline": time.time() + 1000})
    plan.sac_draw_step(roomy, capped := {})
    assert runs[-1] == plan.RUNG_SECONDS and "cut" not in capped["sac_draw"]
    plan.sac_draw_step(roomy, capped)
    assert len(runs) == 3  # past its own cap: not again
    for _ in range(4):
        plan.timeline_step(late, timeline := state)
    assert len(runs) == 7 and timeline["timeline"]["tries"] == 1 and timeline["timeline"]["cut"]


def test_the_sac_patches_apply_as_patch_applies_them(tmp_path):
    """`apply_diff` (the lent machine has neither `patch` nor `git`) leaves the files as `patch
    -p1` does, and a hunk that does not match names its file."""
    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    plan.patched_package(REPO, tmp_path / "ours", plan.SAC_PATCHES)
    shutil.copytree(REPO / "jaxrl", tmp_path / "theirs" / "jaxrl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    changed = set()
    for name in plan.SAC_PATCHES:
        diff = (REPO / plan.PATCHES / f"{name}.diff").read_text()
        subprocess.run(["patch", "-p1", "-s"], input=diff, text=True, check=True,
                       cwd=tmp_path / "theirs")
        changed |= {line[6:].split("\t")[0] for line in diff.splitlines()
                    if line.startswith("+++ b/")}
    assert len(changed) >= 2
    for path in changed:
        ours, theirs = (tmp_path / side / path for side in ("ours", "theirs"))
        assert ours.read_text() == theirs.read_text() != (REPO / path).read_text(), path
    assert "sample_staleness" not in (tmp_path / "ours" / "jaxrl/algos/offpolicy/train_step.py"
                                      ).read_text()
    stale = (REPO / plan.PATCHES / "3-no-staleness.diff").read_text()
    try:
        plan.apply_diff(tmp_path / "ours", stale)  # already applied: its old lines are gone
    except ValueError as err:
        assert "jaxrl/algos/offpolicy/train_step.py" in str(err)
    else:
        raise AssertionError("a hunk that does not match was applied")


def test_jaxrls_sac_cost_runs_shipped_patched_and_profiled_once_per_plan(tmp_path, monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    calls = []

    def measure(rung, timeout, peer_python=None, env=None, code=None):
        calls.append((rung.lib, rung.members, rung.workload.steps_per_member, code,
                      env.get(plan.PROFILE_VAR)))
        return {"status": "ok" if len(calls) != 2 else "failed", "reason": "boom"}

    monkeypatch.setattr(plan, "measure_rung", measure)
    monkeypatch.setattr(plan, "patched_package",
                        lambda root, dest, patches: (dest / "jaxrl").mkdir(parents=True))
    args = argparse.Namespace(out=tmp_path, work=tmp_path, root=REPO, dry=False,
                              deadline=time.time() + 600)
    plan.sac_cost_step(args, state := {})
    steps = plan.workloads(dry=False)["sac-brax-hopper"].steps_per_member
    assert calls == [("jaxrl", 256, steps, None, None),
                     ("jaxrl", 256, steps, tmp_path / "sac-patched", None),
                     ("jaxrl", 256, int(steps * plan.PROFILE_SCALE), None,
                      str(tmp_path / "profile-sac"))]
    cost = state["sac_cost"]
    assert [cost[k]["status"] for k in ("shipped", "patches 2-4", "profiled")] == \
        ["ok", "failed", "ok"]
    assert cost["profiled"]["device_top"] == [] and "device_top" not in cost["shipped"]
    plan.sac_cost_step(args, state)  # only the failed variant again
    assert calls[-1][3] == tmp_path / "sac-patched" and len(calls) == 4
    plan.sac_cost_step(argparse.Namespace(**{**vars(args), "deadline": time.time() + 60}),
                       late := {})
    assert late == {"sac_cost": {}}  # too little of the call left


def test_the_ppo_repeats_run_three_pairs_a_rung_per_commit_and_resume(tmp_path, monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    calls = []
    rates = {"jaxrl": 90.0, "rejax": 100.0}

    def measure(rung, timeout, peer_python=None, env=None, code=None):
        calls.append((rung.workload.name, rung.members, rung.lib))
        if len(calls) == 2:  # the first run's rejax dies: that run is run again
            return {"status": "failed", "reason": "boom"}
        return {"status": "ok", "env_steps_per_second": rates[rung.lib]}

    monkeypatch.setattr(plan, "measure_rung", measure)
    monkeypatch.setenv("JAXRL_COMMIT", "abc")
    args = argparse.Namespace(out=tmp_path, work=tmp_path, root=REPO, dry=False,
                              deadline=time.time() + 600, peer_python="python")
    plan.repeat_step([("ppo-brax-hopper", 256)], args, state := {})
    runs = state["repeats"]["abc"]["ppo-brax-hopper x256"]
    assert [r["status"] for r in runs] == ["failed", "ok", "ok", "ok"]
    assert [r["ratio"] for r in runs[1:]] == [0.9, 0.9, 0.9]
    assert calls == [("ppo-brax-hopper", 256, lib) for _ in range(4) for lib in ("jaxrl", "rejax")]
    plan.repeat_step([("ppo-brax-hopper", 256)], args, state)  # done at this commit: nothing
    assert len(calls) == 8
    monkeypatch.setenv("JAXRL_COMMIT", "def")  # another commit measures afresh, apart
    late = argparse.Namespace(**{**vars(args), "deadline": time.time() + 60})
    plan.repeat_step([("ppo-brax-hopper", 256)], late, state)  # too little of the call left
    assert len(calls) == 8 and state["repeats"]["def"] == {"ppo-brax-hopper x256": []}
    assert json.loads((tmp_path / "plan.json").read_text())["repeats"]["abc"]


def test_the_dry_runs_summary_fails_on_a_steps_fault_but_not_on_a_time_limit():
    """A step that failed on an import or a crash fails the dry run (the loan would meet it
    too); one a time limit stopped on this CPU does not."""
    from tests.experiments.scripts import load

    limits = load("gpu_plan_limits")
    ok = {"status": "ok"}
    plan = {"timeline": {"status": "failed", "reason": "No module named 'gymnax'"},
            "sac_draw": {"status": "failed", "reason": "timed out after 240 s"},
            "sac_cost": {"shipped": ok, "profiled": {"status": "failed", "reason": "boom"}},
            "benches": {"ppo-Freeway-MinAtar": {"status": "failed", "reason": "exit 1: KeyError"},
                        "sac-3M-brax-hopper": {"status": "skipped", "reason": "deadline"}},
            "repeats": {"abc1234567": {"ppo-brax-hopper x4": [
                {"status": "failed", "jaxrl": ok,
                 "rejax": {"status": "failed", "reason": "timed out after 150 s"}},
                {"status": "failed", "jaxrl": {"status": "failed", "reason": "exit 1"},
                 "rejax": ok}]}}}
    assert limits.step_failures(plan) == [
        "timeline: No module named 'gymnax'", "sac_cost profiled: boom",
        "bench ppo-Freeway-MinAtar: exit 1: KeyError",
        "repeat ppo-brax-hopper x4 at abc1234: exit 1"]
    assert limits.step_failures({}) == []


def test_a_repeat_cut_by_the_deadline_is_run_again_and_a_faulty_rung_given_up(tmp_path,
                                                                              monkeypatch):
    import argparse

    from tests.experiments.scripts import load

    plan = load("gpu_plan")
    outcomes = iter([{"status": "failed", "reason": "timed out after 33 s"}] * 4
                    + [{"status": "failed", "reason": "exit 1"}] * 3)
    calls = []

    def measure(rung, timeout, peer_python=None, env=None, code=None):
        calls.append(rung.lib)
        return {"status": "ok", "env_steps_per_second": 1.0} if rung.lib == "jaxrl" \
            else next(outcomes)

    monkeypatch.setattr(plan, "measure_rung", measure)
    monkeypatch.delenv("JAXRL_COMMIT", raising=False)
    args = argparse.Namespace(out=tmp_path, work=tmp_path, root=REPO, dry=False,
                              deadline=time.time() + 600, peer_python="python")
    plan.repeat_step([("ppo-brax-hopper", 256)], args, state := {})
    (runs,) = state["repeats"]["unknown"].values()
    # four runs cut by their time limit, then three faults: the rung is given up
    assert len(runs) == 7 and calls.count("rejax") == 7
    assert [plan._faulted(r) for r in runs] == [False] * 4 + [True] * 3
