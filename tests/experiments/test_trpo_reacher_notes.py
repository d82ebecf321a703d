"""benchmarks/trpo-reacher-cpu: the trpo_reacher suite is the mujoco suite's trpo/brax:reacher
with one setting moved to baselines' value per entry, and its notes hold in the committed files."""

import json
from pathlib import Path

import pandas as pd
import yaml

from jaxrl.algos.trpo import default_config
from jaxrl.studies.bench.suite import load_suite
from tests.experiments.reports import flat_notes, report_row

ROOT = Path(__file__).resolve().parents[2]
BASELINES = yaml.safe_load((ROOT / "presets/trpo/baselines-mujoco.yaml").read_text())
HERE = ROOT / "benchmarks/trpo-reacher-cpu"
MUJOCO = ROOT / "benchmarks/mujoco-cpu"
RUNS = {"defaults": ROOT / "benchmarks/mujoco-cpu/progress/20261205-044236-trpo-brax-reacher-12f967",
        "lambda98": HERE / "progress/20261205-113915-trpo-brax-reacher-0c3374",
        "nobootstrap": HERE / "progress/20261205-122314-trpo-brax-reacher-51d809",
        "value64": HERE / "progress/20261205-130425-trpo-brax-reacher-2c8e51",
        "rawreward": HERE / "progress/20261205-200817-trpo-brax-reacher-7b0d59"}


def _rows(results: Path) -> dict[str, dict]:
    return {e["entry"]: e for e in json.loads(results.read_text())["entries"]}


def _residual_variance(run: Path) -> pd.Series:
    """The value's residual variance per update, the mean over seeds."""
    frame = pd.concat(pd.read_parquet(f) for f in sorted((run / "metrics").glob("*.parquet")))
    return frame.groupby("update")["residual_variance"].mean()


def _cost(run: Path) -> str:
    meta = json.loads((run / "run.json").read_text())
    return (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            "env-steps/s")


def test_each_entry_changes_one_default_to_the_baselines_batch_or_widths():
    """Same algorithm, body, 50-step episodes, budget, seeds and reference as the mujoco
    suite's defaults row; the one changed setting makes baselines' batch (num_envs x num_steps)
    or is baselines' own value."""
    base = {e.name: e for e in load_suite("mujoco").entries}["trpo/brax:reacher"]
    entries = {e.name: e for e in load_suite("trpo_reacher").entries}
    assert set(entries) == {"trpo-batch1024/brax:reacher", "trpo-32x32/brax:reacher",
                            "trpo-lambda98/brax:reacher", "trpo-rawreward/brax:reacher",
                            "trpo-value64/brax:reacher", "trpo-nobootstrap/brax:reacher"}
    for e in entries.values():
        assert (e.algo, e.env, e.env_kwargs, e.total_steps, e.seeds) == (
            base.algo, base.env, base.env_kwargs, base.total_steps, base.seeds)
        assert e.reference == {**base.reference, "note": e.reference["note"]}
        assert base.config == {} and len(e.config) == 1
    defaults = default_config("brax:reacher")
    batch = entries["trpo-batch1024/brax:reacher"].config
    assert defaults.num_envs * batch["num_steps"] == BASELINES["num_envs"] * BASELINES["num_steps"]
    assert defaults.num_envs * defaults.num_steps == 4 * 1024
    widths = entries["trpo-32x32/brax:reacher"].config
    assert list(widths["hidden"]) == BASELINES["hidden"] and tuple(defaults.hidden) == (256, 256)
    for name, key in (("lambda98", "gae_lambda"), ("rawreward", "normalize_reward"),
                      ("nobootstrap", "bootstrap_truncation")):
        (value,) = entries[f"trpo-{name}/brax:reacher"].config.values()
        assert value == BASELINES[key] != getattr(defaults, key)
    value = entries["trpo-value64/brax:reacher"].config["value_minibatches"]
    batch_size = defaults.num_envs * defaults.num_steps
    assert batch_size // value == 1024 // BASELINES["value_minibatches"] == 64
    assert batch_size // defaults.value_minibatches == 1024


def test_the_notes_quote_each_entry_below_the_reference_on_every_seed():
    """Each bullet's mean and interval are its report row's, and every seed is below."""
    flat = flat_notes(HERE)
    rows, base = _rows(HERE / "results.json"), report_row(MUJOCO, "trpo/brax:reacher")
    assert (f"ended at {base['mean']:.1f} [{base['mean_ci_low']:.1f}, {base['mean_ci_high']:.1f}]"
            in flat)
    for entry in ("trpo-batch1024/brax:reacher", "trpo-32x32/brax:reacher",
                  "trpo-lambda98/brax:reacher", "trpo-nobootstrap/brax:reacher",
                  "trpo-value64/brax:reacher"):
        row = rows[entry]
        assert row["status"] == "finished" and len(row["per_seed"]) == 8
        assert row["verdict"] == "below reference" and row["seeds_below"] == 8
        assert max(row["per_seed"]) < row["reference"]
        assert (f"mean {row['mean']:.1f} [{row['mean_ci_low']:.1f}, {row['mean_ci_high']:.1f}], "
                "**below the reference on every seed**") in flat


def test_the_second_round_notes_quote_each_seed_and_the_move_from_the_defaults():
    """The second round's bullets give every seed, and say which side of the defaults' mean
    each entry ended on."""
    flat = flat_notes(HERE)
    rows, base = _rows(HERE / "results.json"), report_row(MUJOCO, "trpo/brax:reacher")
    for entry, side in (("trpo-lambda98/brax:reacher", "above"),
                        ("trpo-nobootstrap/brax:reacher", "below"),
                        ("trpo-value64/brax:reacher", "well above"),
                        ("trpo-rawreward/brax:reacher", "above")):
        row = rows[entry]
        assert "(per seed " + ", ".join(f"{v:.1f}" for v in row["per_seed"]) + ")" in flat
        assert (row["mean"] > base["mean"]) == side.endswith("above")
        assert f"{side} the defaults' {base['mean']:.1f}" in flat
        assert f"mean {row['mean']:.1f} [{row['mean_ci_low']:.1f}, {row['mean_ci_high']:.1f}]" in flat
    lost = base["mean"] - rows["trpo-nobootstrap/brax:reacher"]["mean"]
    assert f"jaxrl's truncation handling is worth about {lost:.1f} in this row" in flat


def test_the_residual_variances_and_the_cost_the_nobootstrap_bullet_quotes():
    """The value's residual variance at each run's last update, and the run's own seconds."""
    flat = flat_notes(HERE)
    last = {name: _residual_variance(RUNS[name]).iloc[-1]
            for name in ("nobootstrap", "lambda98", "defaults")}
    assert (f"{last['nobootstrap']:.3f} of the returns' against "
            f"{last['lambda98']:.3f} with lambda 0.98's bootstrap and "
            f"{last['defaults']:.3f} in the defaults' row") in flat
    assert _cost(RUNS["nobootstrap"]) in flat


def test_the_value64_bullet_quotes_its_early_value_fit_its_cost_and_baselines_row():
    """The residual variances at the 25th update, the run's seconds, and the mean of baselines'
    own configuration in jaxrl that the bullet sets it level with."""
    flat = flat_notes(HERE)
    early = {name: _residual_variance(RUNS[name]).loc[24] for name in ("value64", "defaults")}
    assert (f"by the 25th update (residual variance {early['value64']:.3f}, the defaults' "
            f"row {early['defaults']:.3f} there)") in flat
    assert _cost(RUNS["value64"]) in flat
    theirs = report_row(MUJOCO, "trpo-baselines/brax:reacher")
    own = theirs["mean"]
    row = report_row(HERE, "trpo-value64/brax:reacher")
    # "level": each mean inside the other's interval
    assert theirs["mean_ci_low"] <= row["mean"] <= theirs["mean_ci_high"]
    assert row["mean_ci_low"] <= own <= row["mean_ci_high"]
    assert f"level with baselines' own configuration in jaxrl ({own:.1f})" in flat


def test_the_second_round_rates_the_notes_give():
    """The range of the second round's rates, and the defaults' row's rate beside it."""
    rates = [json.loads((RUNS[name] / "run.json").read_text())["env_steps_per_second"]
             for name in ("lambda98", "nobootstrap", "value64")]
    first = report_row(MUJOCO, "trpo/brax:reacher")["env_steps_per_second"]
    assert (f"ran {first:,.0f} env-steps/s alone on the morning's host, and the round's first "
            f"three entries {min(rates):,.0f} to {max(rates):,.0f} (their run.json files)"
            ) in flat_notes(HERE)


def test_the_rawreward_bullet_its_one_seed_over_its_place_between_the_others_and_its_cost():
    """Below the reference with one seed over it; its mean between lambda 0.98's and the value
    minibatch's; its early value fit no faster than the defaults'; its own seconds."""
    flat = flat_notes(HERE)
    rows = _rows(HERE / "results.json")
    row = rows["trpo-rawreward/brax:reacher"]
    assert row["verdict"] == "below reference" and row["seeds_below"] == 7
    over = [i for i, v in enumerate(row["per_seed"]) if v > row["reference"]]
    assert over == [3]
    assert (f"7 of 8 seeds under it and seed 3 over it (signed-rank p {row['rank_p']:.3f})"
            in flat)
    assert (rows["trpo-lambda98/brax:reacher"]["mean"] < row["mean"]
            < rows["trpo-value64/brax:reacher"]["mean"])
    early = {name: _residual_variance(RUNS[name]).loc[24] for name in ("rawreward", "defaults")}
    assert early["rawreward"] > early["defaults"]
    assert (f"(residual variance {early['rawreward']:.3f} at the 25th update, the defaults' row "
            f"{early['defaults']:.3f})") in flat
    assert _cost(RUNS["rawreward"]) in flat
