"""What a benchmark report may claim: a verdict only at 8 or more seeds (fewer: the per-seed
values), budgets away from the reference's flagged both ways, no verdict column in a smoke run,
a banner on a report that no longer matches its suite, and a readable figure — all from
synthetic stores and results files (no training)."""

import contextlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from jaxrl.cli import main
from jaxrl.runs.store import RunStore
from jaxrl.studies.bench import judge as bench_judge
from jaxrl.studies.bench import report as bench_report

ROOT = Path(__file__).resolve().parents[3]
REF = {"value": 100.0, "measure": "final_eval", "source": "a test", "budget": 100_000}


def _entry(name, algo, env, steps, seeds, ref=REF):
    return {"name": name, "algo": algo, "env": env, "total_steps": steps, "seeds": seeds,
            "config": {}, "reference": ref, "eval_episodes": 4, "env_kwargs": None}


def _meta(values, run_id="r", frames=1):
    return {"run_id": run_id, "status": "finished", "final_eval_return": list(values),
            "frames_per_step": frames}


def test_a_4_seed_entry_gets_no_verdict():
    row = bench_report.entry_result(_entry("ppo/X", "ppo", "X", 100_000, 4),
                                    _meta([150.0, 151.0, 152.0, 153.0]))
    assert row["verdict"] == "too few seeds for a verdict (4 of 8)"
    # 8 seeds of the same kind of numbers do get one, read from the mean's bootstrap-t interval
    eight = bench_report.entry_result(_entry("ppo/X", "ppo", "X", 100_000, 8),
                                      _meta(150.0 + np.arange(8.0)))
    assert eight["verdict"] == "above reference"
    assert eight["mean_ci_low"] > 100.0 and eight["mean_ci_low"] < eight["mean"]
    # non-finite seeds do not count towards the 8
    holes = bench_report.entry_result(_entry("ppo/X", "ppo", "X", 100_000, 8),
                                      _meta([*(150.0 + np.arange(7.0)), float("nan")]))
    assert holes["verdict"].startswith("too few seeds")
    report = _report([{**row, "entry": "ppo/X"}])
    text = bench_report.markdown(report)
    assert "| per seed: 150.0, 151.0, 152.0, 153.0 | 151.5 |" in text
    assert "too few seeds for a verdict: 1" in text and "above 0" in text


def test_an_entry_at_10x_the_references_budget_is_flagged():
    v = bench_report.verdict
    above, below = 11.0 + 0.1 * np.arange(8.0), 1.0 + 0.1 * np.arange(8.0)
    around = 10.0 + np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0, -1.5, 1.5])
    assert v(10.0, 11.0, 12.0, above) == "above reference"
    assert v(10.0, 11.0, 12.0, above, 10.0) == "above reference at 10x its budget"
    assert v(10.0, 1.0, 2.0, below, 0.4) == "below reference at 0.4x its budget"
    assert v(10.0, 9.0, 12.0, around, 1.03) == "reference inside CI"  # whole updates: same
    assert bench_report.budget_text(200.0) == "at 200x its budget"  # never "2e+02"
    values = 150.0 + np.arange(8.0)
    big = bench_report.entry_result(_entry("ppo/X", "ppo", "X", 1_000_000, 8), _meta(values))
    small = bench_report.entry_result(_entry("dqn/X", "dqn", "X", 40_000, 8), _meta(values))
    assert big["verdict"] == "above reference at 10x its budget" and big["budget_share"] == 10
    assert small["verdict"] == "above reference at 0.4x its budget"
    few = bench_report.entry_result(_entry("a2c/X", "a2c", "X", 1_000_000, 4), _meta(values[:4]))
    text = bench_report.markdown(_report([big, small, few]))
    assert "| ppo/X | 1,000,000 | 10x | 8 |" in text and "| dqn/X | 40,000 | 0.4x | 8 |" in text
    assert "above 2" in text and "at more than the reference's budget: 2, at less: 1" in text
    assert "ours is 10x its budget" in text  # and under References
    # an Atari budget in agent steps: the frames beside it
    atari = bench_report.entry_result(
        _entry("ppo/atari:Pong", "ppo", "atari:Pong", 2_500_000, 6,
               {**REF, "budget": 10_000_000, "measure": "train_last100"}),
        {"run_id": "p", "status": "finished", "train_return_last100": [1.0] * 6,
         "frames_per_step": 4, "total_steps_per_seed": 2_458_624})
    text = bench_report.markdown(_report([atari]))
    assert "| 2,458,624 (9.834M frames) | 0.25x |" in text
    assert "at 10,000,000 env steps (40M frames); ours is 0.25x its budget" in text


def test_a_smoke_entry_has_no_verdict_column():
    values = 150.0 + np.arange(8.0)
    row = bench_report.entry_result(_entry("ppo/X", "ppo", "X", 100, 8), _meta(values),
                                    smoke=True)
    assert row["verdict"] == "smoke run: no verdict"
    text = bench_report.markdown(_report([row], budget_scale=0.001))
    header = next(line for line in text.splitlines() if line.startswith("| entry"))
    assert "verdict" not in header and "budget vs" in header  # the scale is still stated
    (line,) = [x for x in text.splitlines() if x.startswith("| ppo/X")]
    assert f"| {bench_judge.ratio_text(row['budget_share'])} |" in line
    assert "below reference" not in text and "above reference" not in text
    assert "verdicts:" not in text and "smoke run, not a result" in text


def _report(rows, budget_scale=1.0, **extra):
    return {"title": "t", "bench_id": "b", "suite": "s", "devices": [], "git_commits": [],
            "report_written_at": "2026-11-25T00:00:00+00:00", "confidence": 0.95,
            "bootstrap_reps": 2000, "budget_scale": budget_scale, "entries": rows, **extra}


SUITE = {"name": "synth", "title": "A synthetic suite whose title is long enough that it would "
         "run off the edge of a two-panel figure if nobody wrapped it, at 10M agent steps",
         "seeds": 8, "eval_episodes": 4, "entries": [
             {"algo": "ppo", "env": "CartPole-v1", "total_steps": 4096,
              "reference": {"value": 400.0, "measure": "final_eval", "source": "s",
                            "budget": 4096}},
             {"name": "ppo-long/CartPole-v1", "algo": "ppo", "env": "CartPole-v1",
              "total_steps": 40960,
              "reference": {"value": 480.0, "measure": "final_eval", "source": "s",
                            "budget": 4096}},
             {"algo": "dqn", "env": "CartPole-v1", "total_steps": 4096,
              "reference": {"value": 300.0, "measure": "final_eval", "source": "s",
                            "budget": 8192}},
             {"algo": "ppo", "env": "Acrobot-v1", "total_steps": 4096,
              "reference": {"value": -90.0, "measure": "final_eval", "source": "s",
                            "budget": 4096}},
             {"algo": "dqn", "env": "Acrobot-v1", "total_steps": 4096,
              "reference": {"value": -100.0, "measure": "final_eval", "source": "s",
                            "budget": 4096}}]}


def synthetic_store(tmp_path, suite=SUITE, seeds=8):
    """A run store holding one bench of ``suite`` with a finished, made-up run per entry:
    evaluation curves that rise towards a per-seed final value."""
    path = tmp_path / "synth.yaml"
    path.write_text(yaml.safe_dump(suite))
    store = RunStore(tmp_path / "runs")
    rng = np.random.default_rng(0)
    entries = []
    for i, raw in enumerate(suite["entries"]):
        name = raw.get("name") or f"{raw['algo']}/{raw['env']}"
        entry = {**_entry(name, raw["algo"], raw["env"], raw["total_steps"], seeds,
                          raw["reference"]), "config": {}}
        entry["key"] = bench_report.spec_key({**entry, "seed": 0})
        entries.append(entry)
        run_id = f"20261125-000000-{i}"
        finals = raw["reference"]["value"] * (1 + 0.1 * rng.standard_normal(seeds))
        folder = store.root / run_id
        folder.mkdir(parents=True)
        spec = {"algo": entry["algo"], "env": entry["env"], "total_steps": entry["total_steps"],
                "seeds": seeds, "seed": 0, "configs": [{}], "env_kwargs": None,
                "eval_episodes": 4}
        preset = yaml.safe_load((ROOT / "presets" / entry["algo"] / "discrete.yaml").read_text())
        folder.joinpath("run.json").write_text(json.dumps({
            "run_id": run_id, "algo": entry["algo"], "env": entry["env"], "status": "finished",
            "seeds": seeds, "total_steps_per_seed": entry["total_steps"],
            "config": {**preset, "torso": "mlp", "total_steps": float(entry["total_steps"])},
            "bench_id": "synth-1", "group": {"spec": spec}, "final_eval_return": list(finals),
            "started_at": "2026-11-25T00:00:00+00:00", "ended_at": "2026-11-25T00:01:00+00:00"}))
        steps = np.linspace(0, entry["total_steps"], 6)
        pd.DataFrame([{"seed": s, "env_steps": int(x), "eval_return": finals[s] * x / steps[-1]}
                      for s in range(seeds) for x in steps]).to_parquet(
            folder / "evaluations.parquet")
    bench_report.write_manifest(store, "synth-1", {
        "bench_id": "synth-1", "suite": "synth", "title": suite["title"], "note": "",
        "suite_path": str(path), "seed": 0, "budget_scale": 1.0, "entries": entries})
    return store, path


def test_a_figure_from_a_tiny_synthetic_store(tmp_path):
    store, _ = synthetic_store(tmp_path)
    out = tmp_path / "out"
    bench_report.write(store, "synth-1", out=str(out))
    assert (out / "curves.png").stat().st_size > 10_000
    report = json.loads((out / "results.json").read_text())
    assert report["stale"] == [] and report["source"] == "store"
    suffix = {r["entry"]: r["verdict"].split(" at ")[-1] for r in report["entries"]}
    assert suffix["ppo-long/CartPole-v1"] == "10x its budget"
    assert suffix["dqn/CartPole-v1"] == "0.5x its budget"
    assert all(r["verdict"].split(" at ")[0] in bench_report.VERDICTS for r in report["entries"])
    # the lines the figure draws: one colour per algorithm, its references in that colour with
    # their own dash styles, each line once in its panel's legend
    import matplotlib

    from jaxrl.studies.bench import figure as bench_figure
    matplotlib.use("Agg")
    fig = bench_figure.draw(report)
    cart = fig.axes[0]
    labels = cart.get_legend_handles_labels()[1]
    assert len(labels) == len(set(labels)) == 6  # 3 curves, 3 references
    lines = {line.get_label(): line for line in cart.get_lines()}
    ppo_curve = lines["ppo (n=8)"]
    ppo_ref = next(v for k, v in lines.items() if k.startswith("ppo reference"))
    assert ppo_ref.get_color() == ppo_curve.get_color()
    refs = [v for k, v in lines.items() if "reference" in k]
    assert len({v.get_linestyle() for v in refs}) == 3
    assert lines["ppo-long (n=8)"].get_color() != ppo_curve.get_color()
    acro = {line.get_label(): line.get_color() for line in fig.axes[1].get_lines()}
    assert acro["ppo (n=8)"] == ppo_curve.get_color()  # the same colour in every panel
    assert "\n" in fig._suptitle.get_text()  # wrapped to fit
    assert cart.get_xlabel() == "env steps per seed"
    # an Atari panel counts agent steps, and says what a frame is
    assert bench_figure._steps_unit([{"frames_per_step": 4}]) == "agent steps per seed (x4 = frames)"


def _legends_clear_of_their_panels(fig) -> bool:
    """Whether every panel's legend lies wholly outside the panel's plotting area."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        if ax.get_visible() and legend is not None:
            box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
            if box.overlaps(area):
                return False
    return True


@pytest.mark.parametrize("folder", ["mujoco-cpu", "navix-cpu", "classic-cpu"])
def test_a_legend_never_covers_data(folder):
    """Each panel's legend sits under the panel (the MuJoCo TRPO panel's legend once hid the
    two failing seeds of a split), on committed reports with many entries per panel."""
    import matplotlib

    from jaxrl.studies.bench import figure as bench_figure
    matplotlib.use("Agg")
    report = json.loads((ROOT / "benchmarks" / folder / "results.json").read_text())
    assert _legends_clear_of_their_panels(bench_figure.draw(report))


def test_a_report_whose_suite_changed_carries_a_banner(tmp_path, capsys):
    from jaxrl.studies.bench import figure as bench_figure
    store, path = synthetic_store(tmp_path)
    bench_report.write(store, "synth-1", out=str(tmp_path / "out"))
    # the suite file changes after the runs: a budget and a reference budget
    suite = yaml.safe_load(path.read_text())
    suite["entries"][0]["total_steps"] = 8192
    suite["entries"][3]["reference"]["budget"] = 40960
    path.write_text(yaml.safe_dump(suite))
    report = bench_report.results(store, "synth-1")
    assert report["stale"] == [
        "ppo/CartPole-v1: ran 4,096 steps per seed; the suite now asks for 8,192",
        "ppo/Acrobot-v1: the reference budget was 4,096 steps when it ran; the suite's "
        "reference now says 40,960"]
    text = bench_report.markdown(report)
    assert "**Stale: this report no longer matches its suite file**" in text
    # from the committed results.json alone (no store): the same check, and the figure redrawn
    # from the curves the file kept; rendering twice gives the same verdicts and reasons
    results_json = tmp_path / "out" / "results.json"
    assert main(["runs", "--runs-dir", str(tmp_path / "none"), "bench", "--from-results",
                 str(results_json)]) == 0
    assert "stale (2 reasons)" in capsys.readouterr().out
    again = json.loads(results_json.read_text())
    assert again["source"] == "results.json" and again["stale"] == report["stale"]
    text = (tmp_path / "out" / "report.md").read_text()
    assert "`curves.png` is redrawn from it" in text and "**Stale" in text
    assert all(r["curve"] and len(r["curve"]["seeds"]) == 8 for r in again["entries"])
    assert bench_figure.png_digest(tmp_path / "out" / "curves.png") == \
        bench_figure.figure_digest(again)
    assert main(["runs", "bench", "--from-results", str(results_json)]) == 0
    assert json.loads(results_json.read_text())["stale"] == report["stale"]
    assert not (tmp_path / "none").exists()  # no store was made
    # a suite that matches again: no banner
    path.write_text(yaml.safe_dump(SUITE))
    assert bench_report.results(store, "synth-1")["stale"] == []
    assert "Stale" not in bench_report.markdown(bench_report.results(store, "synth-1"))
    # env kwargs given to an entry that ran without any (e.g. a time limit set since)
    suite = yaml.safe_load(path.read_text())
    suite["entries"][0]["env_kwargs"] = {"max_steps_in_episode": 50}
    path.write_text(yaml.safe_dump(suite))
    assert bench_report.results(store, "synth-1")["stale"] == [
        "ppo/CartPole-v1: its env_kwargs is not the suite's now (None vs "
        "{'max_steps_in_episode': 50})"]
    path.write_text(yaml.safe_dump(SUITE))
    # a preset changed since the runs (here: the run's learning rate is not today's)
    run_json = next(p for p in store.root.glob("*/run.json")
                    if json.loads(p.read_text())["algo"] == "dqn")
    meta = json.loads(run_json.read_text())
    meta["config"]["learning_rate"] = 0.5
    run_json.write_text(json.dumps(meta))
    (reason,) = bench_report.results(store, "synth-1")["stale"]
    assert reason.startswith(f"{meta['algo']}/{meta['env']}: its config is not today's preset "
                             "(presets/dqn/discrete.yaml) with its overrides: learning_rate ran "
                             "0.5, now "), reason


def _committed_bench_reports() -> list[str]:
    """Every committed bench report: a results.json under benchmarks/ with a bench id."""
    found = []
    for path in sorted((ROOT / "benchmarks").rglob("results.json")):
        with contextlib.suppress(json.JSONDecodeError, AttributeError):
            if "bench_id" in json.loads(path.read_text()):
                found.append(str(path.parent.relative_to(ROOT / "benchmarks")))
    return found


@pytest.mark.parametrize("folder", _committed_bench_reports())
def test_committed_reports_follow_the_rules(folder):
    """Every committed bench report was re-rendered by today's code: no verdict under 8 seeds,
    none in a smoke run, and a banner where its budgets disagree with today's suite."""
    root = ROOT / "benchmarks" / folder
    report = json.loads((root / "results.json").read_text())
    text = (root / "report.md").read_text()
    assert report.get("verdict_method") and "bootstrap-t" in text
    for r in report["entries"]:
        if r["run_id"] and (r.get("n_finite", 0) < 8 or report["budget_scale"] != 1.0):
            assert not any(v in r["verdict"] for v in bench_report.VERDICTS), r["entry"]
    for r in report["entries"]:  # no printed bound outside what the seeds reached
        if r.get("mean_ci_low") is not None:
            assert r["seeds_min"] <= r["mean_ci_low"] <= r["mean_ci_high"] <= r["seeds_max"], r
        if r.get("split") and r["n_finite"] >= 8 and report["budget_scale"] == 1.0 \
                and r.get("reference") is not None:
            assert "inside" not in r["verdict"], r["entry"]  # split seeds are never "inside"
    fresh = bench_report.results_from_json(root / "results.json")
    assert fresh["stale"] == report["stale"]
    assert ("**Stale" in text) == bool(report["stale"])


def test_the_atari_cpu_run_reports_banner_holds():
    """benchmarks/atari-cpu is a run report (no results.json to re-render): its hand-written
    Stale banner says the PPO Atari preset changed since; it stands while the run's config
    differs from today's preset."""
    import re
    root = ROOT
    text = (root / "benchmarks" / "atari-cpu" / "report.md").read_text()
    ran = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))
    preset = yaml.safe_load((root / "presets" / "ppo" / "atari.yaml").read_text())
    differs = {k for k in preset if json.dumps(ran.get(k)) != json.dumps(preset[k])}
    assert ("**Stale**" in text) == bool(differs), differs


def test_a_field_the_presets_gained_since_a_run_is_not_a_difference():
    """A config key added after a run (``asymmetric_critic``) is absent from its run.json: the
    run is judged on the keys it had."""
    from jaxrl.studies.bench.judge import preset_reason

    preset = {k: v for k, v in __import__("yaml").safe_load(
        (ROOT / "presets" / "ppo" / "discrete.yaml").read_text()).items()}
    ran = {k: v for k, v in preset.items() if k != "asymmetric_critic"}
    row = {"entry": "ppo/CartPole-v1", "algo": "ppo", "env": "CartPole-v1", "config": {},
           "run_config": ran}
    assert preset_reason(row) is None
    ran["learning_rate"] = 1.0
    assert "learning_rate ran 1.0" in preset_reason(row)


def test_a_new_store_carries_the_rows_an_earlier_results_json_measured(tmp_path):
    """A bench resumed in a fresh store keeps what the lost store measured: rows the new store
    has not run come from the earlier results.json, named as carried, and drawn from the
    final values they kept (no empty panel, no band on final values)."""
    from jaxrl.studies.bench import figure as bench_figure
    store, _ = synthetic_store(tmp_path)
    earlier = bench_report.results(store, "synth-1")
    for row in earlier["entries"]:
        row.pop("curve")  # written before reports kept curves
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**earlier, "bench_id": "synth-0"}, default=str))
    lost = json.loads(old.read_text())
    gone = lost["entries"][0]["entry"]
    # the new store ran every entry but one
    fresh = bench_report.results(store, "synth-1")
    fresh["entries"][0] = {**fresh["entries"][0], "status": "not run", "per_seed": [],
                           "run_id": None, "curve": None}
    both = bench_report.merged(fresh, lost)
    row = both["entries"][0]
    assert row["entry"] == gone and row["carried_from"] == "synth-0"
    assert row["per_seed"] == lost["entries"][0]["per_seed"] and row["verdict"]
    assert not any(r.get("carried_from") for r in both["entries"][1:])
    assert f"1 of {len(both['entries'])} rows are carried" in bench_report.markdown(both)
    spec = bench_figure.figure_spec(both)
    line = next(ln for p in spec["panels"] for ln in p["lines"] if ln["entry"] == gone)
    assert line["kind"] == "final" and not line["band"] and "curve was not kept" in line["label"]
    bench_figure.plot(both, tmp_path / "both.png")
    assert bench_figure.png_digest(tmp_path / "both.png") == bench_figure.figure_digest(both)
    # an entry that stopped short of its budget says so in its legend
    short = {**fresh["entries"][1], "status": "interrupted", "total_steps": 2048,
             "requested_steps": 4096}
    label = bench_figure._curve_label("ppo", short, 8, "curve")
    assert label == "ppo (n=8, interrupted at 2.05k of 4.1k steps)"


def test_an_earlier_run_that_measured_nothing_is_not_carried_and_unfinished_runs_are_named(
        tmp_path):
    """An earlier row interrupted before its first result carries no value: the entry stays
    'not run' in the new store's report. The summary names the entries that ran and did not
    finish, with their status."""
    store, _ = synthetic_store(tmp_path)
    lost = bench_report.results(store, "synth-1")
    lost["entries"][0] = {**lost["entries"][0], "status": "interrupted", "per_seed": []}
    fresh = bench_report.results(store, "synth-1")
    fresh["entries"][0] = {**fresh["entries"][0], "status": "not run", "per_seed": [],
                           "run_id": None, "curve": None}
    fresh["entries"][1] = {**fresh["entries"][1], "status": "running"}
    both = bench_report.merged(fresh, json.loads(json.dumps(lost, default=str)))
    assert both["entries"][0]["status"] == "not run"
    assert not any(r.get("carried_from") for r in both["entries"])
    text = bench_report.markdown(both)
    assert "rows are carried" not in text
    assert f"not finished: `{both['entries'][1]['entry']}` (running)." in text


def test_a_figure_titled_against_a_random_policy_draws_it():
    """Every committed report whose title sets it against a random policy draws that policy's
    return in each panel (the entries' ``floor``) and lists it under the table."""
    from jaxrl.studies.bench import figure as bench_figure

    titled = []
    for path in sorted((ROOT / "benchmarks").glob("**/results.json")):
        report = json.loads(path.read_text())
        if not isinstance(report, dict) or "random policy" not in str(report.get("title")):
            continue
        titled.append(path)
        spec = bench_figure.figure_spec(report)
        assert all(panel["floors"] for panel in spec["panels"]), path
        assert "The random policy's return" in (path.parent / "report.md").read_text()
    assert titled  # the jaxenvs report at least


def test_a_suite_floor_is_checked(tmp_path):
    """A floor is ``{value, source}``, the value a finite number; anything else is one line."""
    from jaxrl.studies.bench.suite import SuiteError, load_suite

    base = {"name": "f", "entries": [{"algo": "ppo", "env": "CartPole-v1", "total_steps": 64}]}
    good = {**base, "entries": [{**base["entries"][0], "floor": {"value": 22.3, "source": "x"}}]}
    path = tmp_path / "good.yaml"
    path.write_text(yaml.safe_dump(good))
    assert load_suite(str(path)).entries[0].floor == {"value": 22.3, "source": "x"}
    for bad in ({"value": ".inf", "source": "x"}, {"value": 1.0}, 3.0):
        path.write_text(yaml.safe_dump({**base, "entries": [{**base["entries"][0],
                                                             "floor": bad}]}))
        with pytest.raises(SuiteError, match="floor"):
            load_suite(str(path))


def test_a_reference_read_off_a_plot_gets_no_verdict_finer_than_the_reading():
    """Seeds clearly above a reading of 900 +- 50 but not above 950 read "inside (within the
    reading's +-50)"; above 950 they are above; without an uncertainty the same seeds are above
    900."""
    seeds = [925.0 + k for k in range(8)]
    plain = bench_judge.verdict(900.0, 925.0, 932.0, seeds)
    assert plain == "above reference"
    read = bench_judge.verdict(900.0, 925.0, 932.0, seeds, uncertainty=50.0)
    assert read == "reference inside CI (within the reading's +-50)"
    assert bench_judge.verdict_kind(read) == "reference inside CI"
    high = [975.0 + k for k in range(8)]
    assert bench_judge.verdict(900.0, 975.0, 982.0, high, uncertainty=50.0) == "above reference"
    low = [825.0 + k for k in range(8)]
    assert bench_judge.verdict(900.0, 825.0, 832.0, low, uncertainty=50.0).startswith(
        "below reference")
