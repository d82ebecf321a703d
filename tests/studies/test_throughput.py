"""The throughput ladder: its file, the climb's rules, the report, and one real climb."""

import json
import subprocess
import sys

import pytest

from jaxrl import algos
from jaxrl.studies.throughput import LadderError, load_ladder, run_ladder, select
from jaxrl.studies.throughput.point import steady_rate
from jaxrl.studies.throughput.report import workload_table, write_figure, write_report

TINY = """
name: tiny
member_counts: [1, 64]
workloads:
  - name: ppo-tiny
    algo: ppo
    env: CartPole-v1
    steps_per_member: 256
    max_chunk_updates: 2
    config: {num_envs: 2, num_steps: 32, update_epochs: 1, num_minibatches: 1, hidden: [8]}
    peer: rejax
    anchors:
      - {label: someone, members: 64, env_steps_per_second: 1.0e5, hardware: a GPU, source: x}
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def test_the_shipped_ladder_parses_with_every_workload_the_issue_names():
    ladder = load_ladder("throughput")
    names = {w.name for w in ladder.workloads}
    assert {"ppo-cartpole", "ppo-breakout-minatar", "ppo-brax-hopper", "sac-brax-hopper",
            "dqn-cartpole"} <= names
    assert ladder.member_counts == (1, 4, 16, 64, 256, 1024, 2048, 4096, 8192)
    cartpole = next(w for w in ladder.workloads if w.name == "ppo-cartpole")
    assert cartpole.anchors[0].members == 2048 and cartpole.anchors[0].env_steps_per_second == 1e7


def test_every_shipped_workload_is_a_valid_config_of_whole_chunks():
    """Each workload's keys are its algorithm's, and its steps per member are whole chunks (a
    rung that ends mid-chunk would time a partial chunk as a whole one)."""
    for w in load_ladder("throughput").workloads:
        config = algos.get(w.algo).default_config(w.env).replace(**w.config)
        chunk = config.steps_per_update * w.max_chunk_updates
        assert w.steps_per_member % chunk == 0, (w.name, w.steps_per_member, chunk)
        assert w.steps_per_member // chunk > w.warmup_chunks, w.name  # a steady chunk is left


def test_the_minatar_dqn_rung_replays_every_transition_it_stores():
    """The ladder cuts DQN's replay capacity to the rung's steps per member: the buffer then
    never wraps, so it samples as the preset's 100k buffer would (the file's note)."""
    ladder = {w.name: w for w in load_ladder("throughput").workloads}
    dqn = ladder["dqn-breakout-minatar"]
    preset = algos.get("dqn").default_config(dqn.env)
    assert preset.buffer_size >= dqn.config["buffer_size"] >= dqn.steps_per_member
    assert dqn.steps_per_member > preset.learning_starts  # the rung trains past the fill
    assert ladder["pqn-breakout-minatar"].config == {}  # PQN's own preset, untouched


@pytest.mark.parametrize("bad, message", [
    ("workloads: []", "non-empty 'workloads'"),
    ("workloads: [{name: a, algo: ppo, env: CartPole-v1}]", "'steps_per_member' is required"),
    ("workloads: [{name: a, algo: ppo, env: X, steps_per_member: 0}]", "whole number >= 1"),
    ("workloads: [{name: a, algo: ppo, env: X, steps_per_member: 8, colour: red}]",
     "unknown keys ['colour']"),
    ("workloads: [{name: a, algo: ppo, env: X, steps_per_member: 8, anchors: [{label: l}]}]",
     "missing"),
    ("workloads: [{name: a, algo: p, env: X, steps_per_member: 8},"
     " {name: a, algo: p, env: X, steps_per_member: 8}]", "duplicate workload names"),
    ("workloads: [\n  {name: a", "not valid YAML"),
])
def test_a_bad_ladder_file_is_one_line_naming_the_problem(tmp_path, bad, message):
    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    with pytest.raises(LadderError, match=None) as err:
        load_ladder(str(path))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_select_and_unknown_names(tiny):
    ladder = load_ladder(str(tiny))
    assert [w.name for w in select(ladder, ["ppo-*"])] == ["ppo-tiny"]
    with pytest.raises(LadderError, match="no workload"):
        select(ladder, ["sac-*"])
    with pytest.raises(LadderError, match="unknown ladder"):
        load_ladder("no-such-ladder")


def test_steady_rate_leaves_the_warmup_chunks_out():
    assert steady_rate([100, 100, 100], [10.0, 1.0, 1.0], warmup=1) == pytest.approx(100.0)
    assert steady_rate([100], [2.0], warmup=1) == pytest.approx(50.0)  # too few: all of them


def _fake(rates: dict):
    """A measurement that returns ``rates[(lib, members)]``: a rate, "refused" or "failed"."""
    calls = []

    def measure(rung):
        calls.append((rung.lib, rung.members))
        value = rates[(rung.lib, rung.members)]
        base = {"workload": rung.workload.name, "members": rung.members, "lib": rung.lib,
                "steps_per_member_requested": rung.workload.steps_per_member}
        if isinstance(value, str):
            return {**base, "status": value, "reason": f"{value} at {rung.members}"}
        speed = ({"env_steps_per_second": 3 * value, "env_steps_per_second_all": value}
                 if rung.lib == "jaxrl" else {"env_steps_per_second": value})  # steady != whole
        return {**base, "status": "ok", **speed, "compile_seconds": 1.0,
                "compile_source": "compiled", "peak_bytes": 10, "peak_kind": "device",
                "predicted_bytes": 8, "devices": "1 x gpu", "device_kind": "GPU"}
    return measure, calls


def test_the_climb_stops_at_a_refusal_and_the_peer_stops_at_its_own_failure(tiny, tmp_path):
    ladder = load_ladder(str(tiny))
    measure, calls = _fake({("jaxrl", 1): 10.0, ("rejax", 1): 5.0, ("jaxrl", 4): 40.0,
                            ("rejax", 4): "failed", ("jaxrl", 16): 100.0,
                            ("jaxrl", 64): "refused"})
    out = tmp_path / "out"
    data = run_ladder(ladder, list(ladder.workloads), [1, 4, 16, 64, 256], out, peers=["rejax"],
                      measure=measure, progress=False)
    assert calls == [("jaxrl", 1), ("rejax", 1), ("jaxrl", 4), ("rejax", 4), ("jaxrl", 16),
                     ("jaxrl", 64)]  # never 256: the plan refused 64
    assert json.loads((out / "results.json").read_text())["points"] == data["points"]
    table = "\n".join(workload_table(data, "ppo-tiny"))
    assert "2.00x" in table and "refused" in table and "failed" in table  # whole run / whole run
    assert "| 1 | 10 | 30 |" in table  # the whole-run rate, then the steady one
    report = write_report(data, out).read_text()
    assert "the memory plan refused 64 members: refused at 64" in report
    assert "someone, 100,000 env-steps/s at 64 members on a GPU" in report
    assert write_figure(data, out).stat().st_size > 10_000

    # a rerun into the same folder measures nothing it has
    again, calls2 = _fake({})
    run_ladder(ladder, list(ladder.workloads), [1, 4, 16, 64, 256], out, peers=["rejax"],
               measure=again, progress=False)
    assert calls2 == []


def test_an_unreadable_results_file_is_one_line(tiny, tmp_path):
    (tmp_path / "results.json").write_text("{not json")
    ladder = load_ladder(str(tiny))
    with pytest.raises(LadderError, match="cannot be read to resume"):
        run_ladder(ladder, list(ladder.workloads), [1], tmp_path, measure=lambda r: {},
                   progress=False)


def test_the_cli_climbs_a_real_ladder_and_records_the_plans_refusal_as_the_top(tiny, tmp_path):
    """Two real rungs in child processes: 1 member trains; 64 are refused by the memory plan
    (the device given 3 MiB), which ends the climb with the plan's message, not a crash."""
    out = tmp_path / "ladder"
    env = {**__import__("os").environ, "JAXRL_DEVICE_MEMORY_BYTES": str(3 * 2**20)}
    proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", "ladder", "--file", str(tiny),
                           "--members", "1", "64", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    points = json.loads((out / "results.json").read_text())["points"]
    assert [(p["members"], p["status"]) for p in points] == [(1, "ok"), (64, "refused")]
    first, top = points
    assert first["steps_per_member"] == 256 and first["env_steps_per_second"] > 0
    seconds = first["chunk_seconds"]  # each chunk's own: the first's cost is seen apart
    assert len(seconds) == first["chunks"] and min(seconds) > 0
    assert sum(seconds) == pytest.approx(first["run_seconds"], rel=0.05, abs=0.01)
    assert first["compile_seconds"] > 0 and first["peak_bytes"] > 0
    assert set(first["compile_parts"]) == {"init", "chunk"}  # eval off in the ladder
    parts = first["compile_parts"].values()  # compiled side by side: the wait is the longest
    assert max(parts) - 1e-3 <= first["compile_seconds"] <= sum(parts) + 0.05
    assert first["predicted_bytes"] > 0 and first["device"] == "cpu:0"
    assert "memory plan" in top["reason"] and "64 seeds" in top["reason"]
    assert top["predicted_bytes"] > 3 * 2**20
    assert "the memory plan refused 64 members" in (out / "report.md").read_text()
    assert (out / "ladder.png").is_file()


def test_the_cli_refuses_bad_requests_in_one_line(tiny, tmp_path):
    for args, message in [(["--budget-scale", "0"], "--budget-scale must be > 0"),
                          (["--peer", "rejax"], "--peer needs --peer-python"),
                          (["nothing-*"], "no workload")]:
        proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", "ladder", "--file", str(tiny),
                               "--out", str(tmp_path / "x"), *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1


def test_a_plan_of_rungs_runs_in_order_and_leaves_what_a_deadline_cuts_to_the_next_call(
        tiny, tmp_path):
    """`run_rungs` (the GPU plan's order of value): ours then the peer, rung by rung; past the
    call's deadline a rung is recorded `skipped`, which the next call measures and replaces."""
    import time

    from jaxrl.studies.throughput import run_rungs

    ladder = load_ladder(str(tiny))
    w = ladder.workloads[0]
    rates = {("jaxrl", 64): 100.0, ("rejax", 64): 50.0, ("jaxrl", 1): 10.0, ("rejax", 1): 5.0}
    out = tmp_path / "out"
    measure, calls = _fake(rates)
    data = run_rungs(ladder, [(w, 64), (w, 1)], out, peers=["rejax"], measure=measure,
                     progress=False, deadline=time.time() + 3)  # under MIN_RUNG_SECONDS left
    assert calls == []
    assert [p["status"] for p in data["points"]] == ["skipped", "skipped"]  # ours; no peer
    assert all("deadline" in p["reason"] for p in data["points"])

    measure, calls = _fake(rates)
    data = run_rungs(ladder, [(w, 64), (w, 1)], out, peers=["rejax"], measure=measure,
                     progress=False, deadline=time.time() + 600)
    assert calls == [("jaxrl", 64), ("rejax", 64), ("jaxrl", 1), ("rejax", 1)]
    assert [(p["lib"], p["members"], p["status"]) for p in data["points"]] == [
        ("jaxrl", 64, "ok"), ("rejax", 64, "ok"), ("jaxrl", 1, "ok"), ("rejax", 1, "ok")]
    saved = json.loads((out / "results.json").read_text())["points"]
    assert saved == data["points"] and all(p["measured_at"] for p in saved)
    from jaxrl.studies.throughput.report import summary_table

    summary = "\n".join(summary_table(data))  # whole-run rates: 100 vs 50, 10 vs 5
    assert "| ppo-tiny | 10 / 5, 2.00x | 100 / 50, 2.00x |" in summary
    assert "Median ratio over the 2 paired rungs: 2.00x" in summary

    measure, calls = _fake({})
    run_rungs(ladder, [(w, 64), (w, 1)], out, peers=["rejax"], measure=measure, progress=False)
    assert calls == []  # everything recorded: nothing measured twice


def test_every_point_records_the_commit_that_measured_it(tiny, tmp_path, monkeypatch):
    """git's commit where the checkout has a .git; $JAXRL_COMMIT where the tree travelled
    without one (a GPU machine gets a copy of the working tree); None where neither says."""
    from jaxrl.studies.throughput import ladder as ladder_module

    ladder = load_ladder(str(tiny))
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=ladder_module.REPO).stdout.strip()
    measure, _ = _fake({("jaxrl", 1): 10.0})
    data = run_ladder(ladder, list(ladder.workloads), [1], tmp_path / "a", measure=measure,
                      progress=False)
    assert data["points"][0]["commit"] == (head or None)

    monkeypatch.setattr(ladder_module, "code_provenance",
                        lambda: {"git_commit": None, "git_diff": ""})
    monkeypatch.setenv("JAXRL_COMMIT", "0123abc")
    measure, _ = _fake({("jaxrl", 1): 10.0})
    data = run_ladder(ladder, list(ladder.workloads), [1], tmp_path / "b", measure=measure,
                      progress=False)
    assert (data["points"][0]["commit"], data["points"][0]["commit_dirty"]) == ("0123abc", None)
    assert "at commit 0123abc" in write_report(data, tmp_path / "b").read_text()


def test_a_peers_compile_counts_its_lowering_as_jaxrls_does():
    """jaxrl's compile seconds include tracing and lowering; the peer's harness times
    ``.lower()`` apart, so its cell adds the two (the H200's hopper rung: 9.42 + 22.99)."""
    from jaxrl.studies.throughput.report import peer_compile

    assert peer_compile({"lower_seconds": 9.42, "compile_seconds": 22.99}) == "32.4 (9.4 + 23.0)"
    assert peer_compile({"compile_seconds": 7.0}) == "7.0"
