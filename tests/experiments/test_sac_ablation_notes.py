"""benchmarks/sac-ablation-cpu/NOTES.md says what its results.jsonl holds, and the harness's
ablation options parse and are recorded as ablations."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.experiments.reports import flat_notes
from tests.experiments.scripts import EXPERIMENTS, load

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "sac-ablation-cpu"
ITERATIONS = 240  # 30,720 env steps / 128 envs


@pytest.fixture(scope="module")
def runs() -> dict:
    return {r["variant"]: r for r in map(json.loads, (BENCH / "results.jsonl").read_text()
                                         .splitlines())}


def seconds(record: dict) -> float:
    value = record["point"]["run_seconds"]
    return min(value) if isinstance(value, list) else value


def rate(record: dict) -> float:
    return record["point"]["steps_per_member"] / seconds(record)


def test_every_variant_ran_once_and_is_a_row(runs):
    notes = flat_notes(BENCH)
    assert set(runs) == set(load("sac_ablation").VARIANTS)
    for name, r in runs.items():
        assert r["point"]["steps_per_member"] == 30720, name
        row = (f"| {name} | {r['lib']} | {r['change']} | {seconds(r):.2f} | "
               f"{rate(r):,.0f} |")
        assert row in notes, name
    assert runs["jaxrl"]["point"]["env_steps_per_second_all"] == pytest.approx(rate(runs["jaxrl"]))


def test_the_derived_figures_are_the_table(runs):
    notes = flat_notes(BENCH)

    def step_ms(many: str, one: str, extra: int) -> float:
        return (seconds(runs[many]) - seconds(runs[one])) / (ITERATIONS * extra) * 1e3

    saved = seconds(runs["rejax"]) - seconds(runs["rejax-draw"])
    claims = [
        f"{rate(runs['jaxrl']) / rate(runs['rejax']):.2f}x rejax's rate",
        f"{100 * saved / seconds(runs['rejax']):.1f}% of its run",
        f"saves {saved:.1f} s, which is {saved / (ITERATIONS * 128) * 1e3:.2f} ms a draw",
        f"runs at {rate(runs['rejax-draw']) / rate(runs['jaxrl']):.2f}x jaxrl's rate",
        f"It is {rate(runs['rejax-draw-novmap']) / rate(runs['jaxrl']):.2f}x when",
        f"| rejax, with jaxrl's draw | {step_ms('rejax-draw', 'rejax-draw-1', 127):.3f} ms |",
        f"| jaxrl | {step_ms('jaxrl', 'jaxrl-1', 127):.3f} ms |",
        f"jaxrl's is {step_ms('jaxrl', 'jaxrl-1', 127) / step_ms('rejax-draw', 'rejax-draw-1', 127):.2f}x",
        f"{step_ms('rejax-draw-64', 'rejax-draw-1', 63):.3f} ms against "
        f"{step_ms('jaxrl-64', 'jaxrl-1', 63):.3f} ms",
        f"took {seconds(runs['jaxrl-1']) / seconds(runs['rejax-draw-1']):.2f}x rejax's",
    ]
    for claim in claims:
        assert claim in notes, claim
    fill, *learning = runs["jaxrl"]["point"]["chunk_seconds"]
    assert fill == pytest.approx(sum(learning) / len(learning), rel=0.05)  # the fill's select


def test_the_harness_records_its_ablations():
    spec = importlib.util.spec_from_file_location("rejax_point",
                                                  EXPERIMENTS / "peers" / "rejax_point.py")
    point = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(point)
    args = point.parse_args(["sac-brax-hopper", "1", "100", "--set", "num_epochs=64",
                             "--set", "fill_buffer=1000", "--draw-with-replacement"])
    assert args.overrides == {"num_epochs": 64, "fill_buffer": 1000}
    assert args.draw_with_replacement
    with pytest.raises(point.PointError, match="not KEY=VALUE"):
        point.parse_args(["sac-brax-hopper", "1", "100", "--set", "num_epochs"])


def test_the_code_ablations_are_their_table_and_their_patches_exist(runs):
    notes = flat_notes(BENCH)
    against = rate(runs["rejax-draw"])
    lines = [json.loads(x) for x in (BENCH / "code-ablations.jsonl").read_text().splitlines()]
    full = [x for x in lines if x["variant"] == "jaxrl"]
    assert [len(x["patches"]) for x in full] == [1, 2, 3, 4]
    for x in full:
        assert all((BENCH / "patches" / p).is_file() for p in x["patches"])
        numbers = " + ".join(p.split("-")[0] for p in x["patches"])
        row = f"| {numbers} | {seconds(x):.2f} | {rate(x):,.0f} | {rate(x) / against:.2f}x |"
        assert row in notes, row
    first, last = seconds(full[0]), seconds(full[-1])
    assert f"cost {first - last:.2f} s of the {first:.2f} s" in notes
    assert f"still {last / seconds(runs['rejax-draw']):.2f}x rejax's" in notes
    assert f"none (as shipped, the table above) | {seconds(runs['jaxrl']):.2f}" in notes


def test_the_polyak_once_table_is_its_records():
    """The pass-by-pass table of patch 5 and the differences quoted beside it."""
    notes = flat_notes(BENCH)
    lines = [json.loads(x) for x in (BENCH / "polyak-once.jsonl").read_text().splitlines()]
    assert (BENCH / "patches" / "5-polyak-once-a-round.diff").is_file()
    by = {(x["pass"], len(x.get("patches", []))): seconds(x) for x in lines}
    for n in (1, 2):
        assert f"| {n} | {by[(n, 0)]:.2f} | {by[(n, 4)]:.2f} | {by[(n, 5)]:.2f} |" in notes, n
    assert f"{by[(2, 4)] - by[(2, 5)]:.2f} s less in pass 2" in notes
    assert f"{by[(1, 4)] - by[(1, 5)]:.2f} s less in pass 1" in notes
    assert f"varied by {by[(1, 4)] - by[(2, 4)]:.2f} s between passes" in notes
    ratios = sorted(by[(n, 4)] / by[(n, 0)] for n in (1, 2))
    assert f"took {ratios[0]:.2f}x and {ratios[1]:.2f}x rejax's run" in notes


def _lines(name: str) -> list[dict]:
    return [json.loads(x) for x in (BENCH / name).read_text().splitlines() if x.strip()]


def test_the_kernel_counts_are_their_file():
    notes = flat_notes(BENCH)
    rows = {r["label"]: r for r in json.loads((BENCH / "hlo-kernels.json").read_text())}
    names = {"jaxrl 700fa0f as it ships": "jaxrl as it ships",
             "jaxrl 700fa0f with patches 2-4": "jaxrl with patches 2-4",
             "rejax 0.1.3 with jaxrl's draw": "rejax with jaxrl's draw"}
    assert set(rows) == set(names)
    for label, shown in names.items():
        r = rows[label]
        assert sum(r["by_op"].values()) == r["kernels"] and r["trip"] == 128
        row = (f"| {shown} | {r['kernels']} | {r['by_op']['copy']} | "
               f"{r['dots']} ({r['dots_alone']}) |")
        assert row in notes, row
    assert rows["rejax 0.1.3 with jaxrl's draw"]["kernels"] > max(
        r["kernels"] for label, r in rows.items() if label.startswith("jaxrl"))


def test_the_pinned_and_device_tables_are_their_records():
    notes = flat_notes(BENCH)
    pinned = {(x["variant"], x["pass"], x.get("pinned_cpus")): seconds(x)
              for x in _lines("pinned.jsonl")}
    for n in (1, 2):
        row = (f"| {n} | {pinned[('rejax-draw', n, '1')]:.2f} | {pinned[('jaxrl', n, '1')]:.2f} "
               f"| {pinned[('rejax-draw', n, None)]:.2f} | {pinned[('jaxrl', n, None)]:.2f} |")
        assert row in notes, row
    on_one = [pinned[("jaxrl", n, "1")] / pinned[("rejax-draw", n, "1")] for n in (1, 2)]
    on_two = [pinned[("jaxrl", n, None)] / pinned[("rejax-draw", n, None)] for n in (1, 2)]
    assert f"jaxrl took {on_one[0]:.2f}x and {on_one[1]:.2f}x rejax's run" in notes
    assert f"it took {on_two[0]:.2f}x and {on_two[1]:.2f}x." in notes

    lines = _lines("devices.jsonl")
    assert all(x["point"]["device_count"] == 1 for x in lines if x["lib"] == "rejax")
    by = {(x["variant"], x["pass"], x.get("jaxrl_cpu_devices")): seconds(x) for x in lines}
    for n in (1, 2):
        row = (f"| {n} | {by[('rejax-draw', n, None)]:.2f} | {by[('jaxrl', n, None)]:.2f} | "
               f"{by[('jaxrl', n, 1)]:.2f} |")
        assert row in notes, row
    one_two = [by[("jaxrl", n, 1)] / by[("jaxrl", n, None)] for n in (1, 2)]
    assert f"took {one_two[0]:.2f}x and {one_two[1]:.2f}x its run with two" in notes
    one = [by[("jaxrl", n, 1)] / by[("rejax-draw", n, None)] for n in (1, 2)]
    two = [by[("jaxrl", n, None)] / by[("rejax-draw", n, None)] for n in (1, 2)]
    assert (f"it took {one[0]:.2f}x and {one[1]:.2f}x with one device, and {two[0]:.2f}x and "
            f"{two[1]:.2f}x with two") in notes
    rejax = [s for (v, *_), s in {**pinned, **by}.items() if v == "rejax-draw"]
    assert f"({min(rejax):.2f}-{max(rejax):.2f} s over these six runs)" in notes


def _steady(name: str) -> list[list[tuple[str, float]]]:
    """The intervals of a thread sample with XLA work, less the first and the last."""
    record = json.loads((BENCH / "threads" / f"{name}.json").read_text())
    assert record["exit"] == 0 and record["every_seconds"] == 3.0
    busy = [[(n, c) for _, n, c in iv["threads"]] for iv in record["intervals"]
            if any(n == "tf_XLAEigen" and c > 0.5 for _, n, c in iv["threads"])]
    return busy[1:-1]


def test_the_thread_samples_are_their_files():
    notes = flat_notes(BENCH)

    def totals(name):
        return [sum(c for _, c in iv) for iv in _steady(name)]

    def per_thread(name):
        return [c for iv in _steady(name) for n, c in iv if n == "tf_XLAEigen"]

    one = totals("jaxrl-1-device")
    assert f"{min(one):.1f}" == f"{max(one):.1f}" == "3.0"
    assert "jaxrl with one device used 3.0 s of CPU in every 3 s interval" in notes
    for name, who in (("jaxrl-2-devices", "jaxrl with two devices"),
                      ("rejax-1-device", "rejax with one device")):
        t, c = totals(name), per_thread(name)
        low = f"{min(t):.1f}-{max(t):.1f} s an interval" if f"{min(t):.1f}" != f"{max(t):.1f}" \
            else f"{min(t):.1f} s an interval"
        assert f"{who} used {low}" in notes, who
        assert f"({min(c):.1f}-{max(c):.1f} s each)" in notes, who
        assert all(len([n for n, x in iv if n == "tf_XLAEigen" and x > 1.0]) == 2
                   for iv in _steady(name)), name


def test_the_thread_sampler_reads_a_command(tmp_path):
    script = load("thread_cpu")
    out = tmp_path / "threads.json"
    # 0.6 s of the child's own CPU, not of wall time: on a loaded machine a wall-time loop gets
    # too little CPU for the sampler to see
    code = "import time\nwhile time.process_time() < 0.6: pass"
    assert script.main([str(out), "--every", "0.2", "--", sys.executable, "-c", code]) == 0
    record = json.loads(out.read_text())
    assert record["exit"] == 0 and record["intervals"]
    used = sum(c for iv in record["intervals"] for *_, c in iv["threads"])
    assert 0.2 < used < 2.0


def test_the_one_and_two_device_programs_are_one_program():
    lines = [x.split() for x in (BENCH / "hlo-one-vs-two-devices.txt").read_text().splitlines()
             if x and not x.startswith("#")]
    assert [Path(name).parent.name for _, name in lines] == ["two-devices", "one-device"]
    assert lines[0][0] == lines[1][0] and len(lines[0][0]) == 64


def _points_by_pass(name: str) -> dict:
    return {r["pass"]: r["point"] for r in map(json.loads, (BENCH / name).read_text()
                                                .splitlines())}


def test_the_warmup_skip_section_is_its_runs_and_rejaxs_branch():
    notes = (BENCH / "NOTES.md").read_text()
    before = _points_by_pass("warmup-skip-before.jsonl")
    after = _points_by_pass("warmup-skip-after.jsonl")
    assert sorted(before) == sorted(after) == [1, 2]
    cells = lambda p: (f"{p['run_seconds']:.2f} ("
                       + ", ".join(f"{c:.2f}" for c in p["chunk_seconds"]) + ")")
    for n in (1, 2):
        assert f"| {n} | {cells(before[n])} | {cells(after[n])} |" in notes
    fills = lambda side: sorted(p["chunk_seconds"][0] for p in side.values())
    assert (f"fill chunk went from {fills(before)[0]:.2f}-{fills(before)[-1]:.2f} s to "
            f"{fills(after)[0]:.2f}-{fills(after)[-1]:.2f} s") in notes
    ratios = [after[n]["run_seconds"] / before[n]["run_seconds"] for n in (1, 2)]
    times = "\u00d7"  # the notes' multiplication sign
    assert f"{ratios[0]:.2f}{times} and {ratios[1]:.2f}{times} its time before" in notes
    learning = lambda side: sorted(c for p in side.values() for c in p["chunk_seconds"][1:])
    assert (f"{learning(before)[0]:.2f}-{learning(before)[-1]:.2f} s before and "
            f"{learning(after)[0]:.2f}-{learning(after)[-1]:.2f} s after") in notes
    rows = {r["label"]: r for r in json.loads(
        (ROOT / "benchmarks" / "gpu-hlo-cpu" / "sac-kernels-cpu.json").read_text())}
    rejax = next(r for label, r in rows.items() if label.startswith("rejax"))
    big = max(rejax["round_conditionals"], key=lambda c: max(c["branch_kernels"]))
    assert sorted(big["branch_kernels"]) == [0, 128 * rejax["kernels"] + 142]
    assert (f"branches are {min(big['branch_kernels'])} or "
            f"{max(big['branch_kernels']):,} kernels") in notes
    assert f"128 gradient steps of {rejax['kernels']} kernels" in notes
    assert f"146.6 s over 20,736 draws, {146.6 / 20736 * 1e3:.2f} ms a draw" in notes
    assert f"over {30720 / 20736:.2f} times the steps" in notes
