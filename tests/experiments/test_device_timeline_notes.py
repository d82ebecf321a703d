"""The device-timeline notes' figures are the committed timeline's (benchmarks/device-timeline-cpu),
and the script's idle arithmetic is right on a hand-made timeline."""

import json
import re
from pathlib import Path

from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "device-timeline-cpu"


def test_every_figure_of_the_table_is_the_timelines():
    runs = json.loads((ROOT / "timeline.json").read_text())["ppo-cartpole-2048"]["runs"]
    notes = (ROOT / "NOTES.md").read_text()
    for label, (run,) in runs.items():
        row = next(line for line in notes.splitlines() if line.startswith(f"| {label} "))
        gaps = ", ".join(f"{g:g}" for g in run["idle_gap_after_chunk_s"]["checkpointed"])
        cells = [f"{run['idle_share']:g}", f"{run['device_idle_s']:g}", f"{run['span_s']:g}",
                 gaps]
        assert [c.strip() for c in row.split("|")[2:6]] == cells, label
        assert f"{run['load_average_1m_before']:g}" in notes
    assert max(g for (run,) in runs.values()
               for g in run["idle_gap_after_chunk_s"]["evaluated"]) <= 0.09
    assert re.search(r"at most 0\.09 s in every version", notes)


def test_the_sac_rows_and_figures_are_the_timelines():
    entry = json.loads((ROOT / "timeline.json").read_text())["sac-hopper-64"]
    notes = (ROOT / "NOTES.md").read_text()
    sac = notes.split("## SAC on brax hopper at 64 members")[1]
    flat = " ".join(sac.split())
    for label, (run,) in entry["runs"].items():
        row = next(line for line in sac.splitlines() if line.startswith(f"| {label} "))
        gaps = ", ".join(str(g) for g in run["idle_gap_after_chunk_s"]["checkpointed"])
        cells = [str(run[k]) for k in ("idle_share", "device_idle_s", "span_s")] + [gaps]
        assert [c.strip() for c in row.split("|")[2:6]] == cells, label
        blocked = [run["dispatch_blocking_s"][i] for i in (1, 5, 7, 11)]
        assert all(b > 100 for b in blocked) and max(
            b for i, b in enumerate(run["dispatch_blocking_s"]) if i not in (1, 5, 7, 11)) < 6
        assert ", ".join(f"{b:.2f}" for b in blocked[:3]) in flat.replace(" and ", ", ")
        saves = run["checkpoint_blocking_s"]
        assert f"{min(saves):.2f}" in flat and f"{max(saves):.2f}" in flat
        assert f"{run['compile_seconds']:.2f} s" in flat
    assert "at most 5.51 s" in flat


def test_idle_time_is_the_gaps_between_calls_run_in_dispatch_order():
    timeline = load("device_timeline")
    calls = [{"kind": "chunk", "dispatch": 0.0, "returned": 0.1, "ready": 2.0},   # runs 0-2
             {"kind": "chunk", "dispatch": 1.0, "returned": 3.9, "ready": 4.0},  # runs 2-4
             {"kind": "eval", "dispatch": 5.0, "ready": 6.0},    # idle 4-5
             {"kind": "chunk", "dispatch": 6.5, "ready": 8.0}]   # idle 6-6.5
    record = {"calls": calls, "saves": [{"step": 3, "start": 4.0, "end": 4.5}],
              "compile_seconds": 1.0, "run_seconds": 8.0}
    summary = timeline.summarize(record, evaluated={1}, checkpointed={0})
    assert summary["span_s"] == 8.0 and summary["device_idle_s"] == 1.5
    assert summary["idle_gap_after_chunk_s"]["checkpointed"] == [0.0]
    assert summary["idle_gap_after_chunk_s"]["evaluated"] == [1.0]
    assert summary["checkpoint_blocking_s"] == [0.5]
    assert summary["dispatch_blocking_s"] == [0.1, 2.9]  # the second launch held the host


def test_the_training_child_keeps_the_callers_import_path(monkeypatch, tmp_path):
    """The child imports the code under test first and what the caller's path holds after it
    (the GPU plan's wheel folders: gymnax lives there on a lent machine)."""
    import os
    import subprocess
    from types import SimpleNamespace

    timeline = load("device_timeline")
    seen = {}

    def run(cmd, cwd, env, capture_output, text):
        seen.update(env=env)
        return SimpleNamespace(returncode=0, stdout='{"ok": 1}\n', stderr="")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/site-jaxrl", "/site-shared"]))
    assert timeline.run_one(tmp_path, {}) == {"ok": 1}
    assert seen["env"]["PYTHONPATH"].split(os.pathsep) == [str(tmp_path), "/site-jaxrl",
                                                           "/site-shared"]
