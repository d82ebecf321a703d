"""benchmarks/device-count-cpu/NOTES.md says what its points.jsonl holds: each pair's seconds,
their ratio, and the summary figures."""

import json
import statistics
from pathlib import Path

from tests.experiments.reports import flat_notes

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "device-count-cpu"


def test_the_table_and_its_summary_are_the_points():
    notes = flat_notes(BENCH)
    lines = [json.loads(x) for x in (BENCH / "points.jsonl").read_text().splitlines() if x]
    by = {(x["workload"], x["setting"], x["pass"]): x["point"] for x in lines}
    assert all(x["point"]["status"] == "ok" for x in lines)
    assert {p["local_devices"] for (_, s, _), p in by.items() if s == "one-device"} == {1}
    assert {p["local_devices"] for (_, s, _), p in by.items() if s == "per-core"} == {2}
    ratios = []
    for (name, setting, n), two in by.items():
        if setting != "per-core":
            continue
        one = by[(name, "one-device", n)]
        ratio = one["run_seconds"] / two["run_seconds"]
        ratios.append(ratio)
        row = (f"| {name} | {two['steps_per_member']:,} | {n} | {two['run_seconds']:.2f} | "
               f"{one['run_seconds']:.2f} | {ratio:.2f} |")
        assert row in notes, row
    faster = sum(r < 1 for r in ratios)
    assert f"faster in {faster} of the {len(ratios)} pairs" in notes
    assert f"median of the ten ratios is {statistics.median(ratios):.2f}x" in notes
    assert len(ratios) == 10
    assert f"from {min(ratios):.2f}x to {max(ratios):.2f}x" in notes


def test_the_replay_and_on_policy_figures():
    notes = flat_notes(BENCH)
    lines = [json.loads(x) for x in (BENCH / "points.jsonl").read_text().splitlines() if x]
    by = {(x["workload"], x["setting"], x["pass"]): x["point"]["run_seconds"] for x in lines}
    ratio = {(w, n): by[(w, "one-device", n)] / by[(w, "per-core", n)]
             for (w, s, n) in by if s == "per-core"}
    dqn = [ratio[("dqn-cartpole", n)] for n in (1, 2)]
    assert f"DQN took {dqn[0]:.2f}x and {dqn[1]:.2f}x" in notes
    on_policy = sorted(r for (w, _), r in ratio.items() if not w.startswith("dqn"))
    outlier = on_policy.pop()
    assert f"took {on_policy[0]:.2f}x-{on_policy[-1]:.2f}x, apart from one PPO CartPole pair at " \
           f"{outlier:.2f}x" in notes
    sac = [json.loads(x) for x in (BENCH.parent / "sac-ablation-cpu" / "devices.jsonl")
           .read_text().splitlines() if x]
    sac_by = {(x["variant"], x["pass"], x.get("jaxrl_cpu_devices")): x["point"]["run_seconds"]
              for x in sac}
    sac_ratio = [sac_by[("jaxrl", n, 1)] / sac_by[("jaxrl", n, None)] for n in (1, 2)]
    assert f"SAC {sac_ratio[0]:.2f}x and {sac_ratio[1]:.2f}x" in notes
