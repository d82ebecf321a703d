"""What a benchmark entry may claim: its numbers over seeds, its budget against the
reference's, its verdict, and whether its report still matches the suite file it came from.

* A verdict (above / below / reference inside the interval / split / inconclusive) is
  `jaxrl.studies.verdicts.call`: the mean's 95% bootstrap-t interval bounded by the seeds' range and a
  signed-rank test against the reference must agree, and seeds that split into a failing and
  a succeeding group are never "inside": split by their scores, or by what their policies do
  where a row records it (``split_evidence``, `jaxrl.studies.bench.split_evidence`). Only with at least `MIN_SEEDS` (8) finite per-seed
  values; with fewer the row says "too few seeds for a verdict" and the report shows the
  per-seed values. Beside it: the seeds' range, the mean of the worst quarter (CVaR), the split
  (the share that succeeds, its exact interval, their mean), and the IQM with its
  percentile-bootstrap CI, descriptive only.
* A budget (the steps run, whole updates) more than `BUDGET_TOLERANCE` (5%) away from the
  reference's is flagged with its ratio either way ("at 10x its budget", "at 0.25x its budget").
* A smoke run (budget scaled) gets no verdict.
* Stale (`stale_reasons`): the report's runs no longer match today's suite file.

No engine import: suite files are read as plain YAML.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxrl import named_yaml, presets, stats
from jaxrl.repo_data import SUITES_DIR
from jaxrl.studies import verdicts
from jaxrl.studies.bench.preset_match import known_then, preset_reason, same_value

CONFIDENCE = 0.95
BOOTSTRAP_REPS = 2000
MIN_SEEDS = stats.MIN_SEEDS_FOR_VERDICT
BUDGET_TOLERANCE = 0.05  # a budget within 5% of the reference's (whole updates) is the same
VERDICTS = ("reference inside CI", "above reference", "below reference", "split",
            "inconclusive")


def verdict_kind(text: str) -> str | None:
    """Which of `VERDICTS` a row's verdict text gives (``"below reference"`` of ``"below
    reference (sequential: 16 seeds, ...)"`` or of ``"interrupted: below reference at 0.5x its
    budget"``), None for none (not run, too few seeds, a smoke run)."""
    for part in (text, text.split(": ", 1)[-1]):
        for kind in VERDICTS:
            if part.startswith(kind):
                return kind
    return None


def budget_share(steps: float, budget: float | None) -> float:
    """The steps a run ran over the reference's budget (1.0 when it has none)."""
    return 1.0 if budget is None or not float(budget) > 0 else float(steps) / float(budget)


def budget_text(share: float | None) -> str:
    """``at 10x its budget`` / ``at 0.25x its budget``; empty within `BUDGET_TOLERANCE` of the
    reference's budget (or with no budget to compare)."""
    if share is None or not np.isfinite(share) or abs(share - 1.0) <= BUDGET_TOLERANCE:
        return ""
    return f"at {ratio_text(share)} its budget"


def ratio_text(share: float) -> str:
    """``10x``, ``200x``, ``0.25x``, ``0.001x``: two significant digits, never an exponent."""
    return f"{share:.0f}x" if share >= 10 else f"{float(f'{share:.2g}'):g}x"


def verdict(reference: float, low: float, high: float, values, share: float = 1.0,
            split: bool | None = None, alpha: float = verdicts.ALPHA,
            uncertainty: float | None = None, split_by: str | None = None) -> str:
    """`verdicts.call` of the seeds ``values`` against ``reference`` with the bounded interval
    ``(low, high)``, and the budget ratio when ours differs from the reference's by more than
    5% either way (a run at 10x the reference's budget is no more like-for-like than one at a
    quarter of it). ``split``: whether the seeds split, where the caller knows (else found);
    ``split_by``: what told them apart where it was not their scores (`split_evidence`).
    ``uncertainty``: the reference is a reading (off a published plot) good to +- this much, and
    the verdict is no finer: a side only where the seeds are on it against the far end of the
    reading's range (`within_reading`)."""
    if not np.isfinite(low) or not np.isfinite(high):
        return "no result"
    where = verdicts.call(reference, low, high, values, split, alpha, split_by)
    if uncertainty:
        where = within_reading(where, reference, uncertainty, low, high, values, split, alpha)
    flag = budget_text(share)
    return f"{where} {flag}" if flag else where


def within_reading(where: str, reference: float, uncertainty: float, low: float, high: float,
                   values, split: bool | None, alpha: float) -> str:
    """A verdict against a reference read off a plot, ``reference +- uncertainty``: "above" only
    where the seeds are above ``reference + uncertainty`` by the same rule, "below" only below
    ``reference - uncertainty``; a side found against the reading but not beyond its range reads
    ``reference inside CI (within the reading's +-u)``."""
    side = where.split(" ")[0]
    if side not in ("above", "below"):
        return where
    edge = reference + uncertainty if side == "above" else reference - uncertainty
    if verdicts.call(edge, low, high, values, split, alpha).startswith(side):
        return where
    return f"reference inside CI (within the reading's +-{uncertainty:g})"


ADAPTIVE_DEFAULTS = {"batch": 8, "max_batches": 4, "alpha": 0.05}

#: The engine options an entry's ``config`` may set (`jaxrl.train` takes them with the config),
#: with the engine's defaults (`jaxrl.engine.spec.GroupSpec`'s; a test holds them equal): they
#: set how often the curve is evaluated, so a stored run's spec records them.
ENTRY_ENGINE_DEFAULTS = {"max_chunk_updates": 50, "eval_every": None, "eval_sample": False}


def adaptive_plan(seeds) -> dict | None:
    """A suite entry's ``seeds`` as an adaptive plan (`ADAPTIVE_DEFAULTS` filled in: ``seeds:
    adaptive`` or ``{adaptive: {...}}``), None for a number of seeds. Unchecked: the suite
    reader (`jaxrl.studies.bench.suite`) checks it."""
    if seeds == "adaptive":
        return dict(ADAPTIVE_DEFAULTS)
    if isinstance(seeds, dict) and "adaptive" in seeds:
        return {**ADAPTIVE_DEFAULTS, **(seeds["adaptive"] or {})}
    return None


def sequential_level(adaptive: dict) -> float:
    """The level of each look of an entry with ``seeds: adaptive``: its ``alpha`` shared
    equally by the ``max_batches`` looks it may take (Bonferroni), so the chance that any look
    finds a side that is not there stays at most ``alpha``."""
    return float(adaptive["alpha"]) / int(adaptive["max_batches"])


def sequential_verdict(row: dict, finite: np.ndarray) -> str:
    """An adaptive entry's verdict (`verdicts.call` at `sequential_level`, with its interval at
    that level), with the seeds and batches it took: ``below reference (sequential: 16 seeds,
    2 of at most 4 batches)``. The interval the decision used is kept on the row
    (``decision_ci_low``, ``decision_ci_high`` at ``decision_confidence``): the report prints
    it, not the 95% one."""
    adaptive = row["adaptive"]
    level = sequential_level(adaptive)
    low, high = stats.bootstrap_t_ci(finite, 1.0 - level, BOOTSTRAP_REPS)
    low, high = verdicts.bounded_interval(low, high, finite)
    row.update(decision_confidence=1.0 - level, decision_ci_low=low, decision_ci_high=high)
    share = row["budget_share"] if row["budget_share"] is not None else 1.0
    where = verdict(row["reference"], low, high, finite, share, split=row["split"] is not None,
                    alpha=level)
    batches = -(-finite.size // int(adaptive["batch"]))
    return (f"{where} (sequential: {finite.size} seeds, {batches} of at most "
            f"{adaptive['max_batches']} batches)")


def judge(row: dict, smoke: bool = False) -> dict:
    """Fill a row's numbers from its ``per_seed`` values and reference: IQM with its percentile
    bootstrap CI (descriptive), the mean with its bootstrap-t interval (``bootstrap_t_*``) and
    that interval bounded by the seeds' range (``mean_ci_*``, the verdict's), the seeds' range,
    CVaR and split, the signed-rank p-value and seeds below the reference, the budget share
    (of the steps run), and the verdict. No verdict on a smoke run, nor below `MIN_SEEDS` finite
    per-seed values ("too few seeds for a verdict"): at 2 to 7 seeds no interval carries one
    (see `stats.bootstrap_t_ci`)."""
    values = np.array([np.nan if v is None else float(v) for v in row.get("per_seed") or []])
    finite = values[np.isfinite(values)]
    row.update(n_finite=int(finite.size), iqm=None, ci_low=None, ci_high=None, mean=None,
               mean_ci_low=None, mean_ci_high=None, bootstrap_t_low=None, bootstrap_t_high=None,
               seeds_min=None, seeds_max=None, cvar=None, split=None, rank_p=None,
               seeds_below=None, decision_confidence=None, decision_ci_low=None,
               decision_ci_high=None)
    row["budget_share"] = (None if row.get("reference_budget") is None
                           else budget_share(row["total_steps"], row["reference_budget"]))
    if row.get("run_id") is None:
        row["verdict"] = "not run"
        return row
    if finite.size:
        summary = stats.summarize(finite, confidence=CONFIDENCE, reps=BOOTSTRAP_REPS)
        row.update(iqm=summary["iqm"], ci_low=summary["iqm_ci_low"],
                   ci_high=summary["iqm_ci_high"], mean=summary["mean"])
        row.update(seeds_min=float(finite.min()), seeds_max=float(finite.max()),
                   cvar=verdicts.cvar(finite), split=_split(row, values))
    if finite.size >= 2:
        low, high = stats.bootstrap_t_ci(finite, CONFIDENCE, BOOTSTRAP_REPS)
        row.update(bootstrap_t_low=low, bootstrap_t_high=high)
        row["mean_ci_low"], row["mean_ci_high"] = verdicts.bounded_interval(low, high, finite)
    if finite.size and row.get("reference") is not None:
        row.update(rank_p=verdicts.signed_rank_test(finite, row["reference"]),
                   seeds_below=int((finite < row["reference"]).sum()))
    if not finite.size:
        row["verdict"] = "no result"
    elif smoke:
        row["verdict"] = "smoke run: no verdict"
    elif row.get("reference") is None:
        row["verdict"] = "no reference"
    elif finite.size < MIN_SEEDS:
        row["verdict"] = f"too few seeds for a verdict ({finite.size} of {MIN_SEEDS})"
    elif row.get("adaptive"):
        row["verdict"] = sequential_verdict(row, finite)
    else:
        share = row["budget_share"] if row["budget_share"] is not None else 1.0
        row["verdict"] = verdict(row["reference"], row["mean_ci_low"], row["mean_ci_high"],
                                 finite, share, split=row["split"] is not None,
                                 uncertainty=row.get("reference_uncertainty"),
                                 split_by=(row["split"] or {}).get("by"))
    if row.get("status") != "finished":
        row["verdict"] = f"{row.get('status')}: {row['verdict']}"
    return row


def _split(row: dict, values: np.ndarray) -> dict | None:
    """The row's split: the one its ``split_evidence`` records (`split_evidence`: the seeds
    told apart by what their policies do), else the one its scores show, if any."""
    evidence = row.get("split_evidence")
    if evidence:
        return verdicts.labelled_split(values, evidence["failing"], evidence["by"], CONFIDENCE)
    return verdicts.split_summary(values[np.isfinite(values)], CONFIDENCE)


def suite_file(suite: str | None, suite_path: str | None, by_name: bool = False) -> Path | None:
    """The suite file a bench's report is checked against (`suite_entries`): the one at
    ``suite_path`` (where it was read from), else ``experiments/benchmarks/<suite>.yaml``;
    ``by_name``: the other way round. None where neither is a file."""
    named = str(SUITES_DIR / f"{suite}.yaml") if suite else None
    for candidate in ((named, suite_path) if by_name else (suite_path, named)):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def suite_entries(suite: str | None, suite_path: str | None = None,
                  by_name: bool = False) -> dict[str, dict] | None:
    """``{entry name: entry}`` of the suite file as it is today (by path, else by name under
    ``experiments/benchmarks/``; ``by_name``: the other way round, for a results file that
    may come from another machine), with the suite's defaults for seeds and evaluation
    episodes filled in (as `jaxrl.studies.bench.suite.load_suite` does); None if there is no readable
    file."""
    path = suite_file(suite, suite_path, by_name)
    if path is None:
        return None
    try:
        raw = named_yaml.read(path, "suite", ValueError)
        out = {}
        for e in raw["entries"]:
            if not isinstance(e, dict):
                continue
            name = str(e.get("name") or f"{str(e['algo']).lower()}/{e['env']}")
            out[name] = {**e, "name": name, "seeds": e.get("seeds", raw.get("seeds", 4)),
                         "eval_episodes": e.get("eval_episodes", raw.get("eval_episodes", 16)),
                         "config": presets.entry_config(e), "env_kwargs": e.get("env_kwargs")}
        return out
    except (TypeError, KeyError, AttributeError, ValueError):  # a PresetError is a ValueError
        return None


def current_references(manifest: dict) -> dict[str, dict]:
    """``{entry name: reference}`` from the suite file the bench came from, if it is still
    there and readable: a reference corrected after the runs (its source, its value) shows in
    a rebuilt report. The bench id does not depend on references, so the runs stay valid."""
    entries = suite_entries(manifest.get("suite"), manifest.get("suite_path")) or {}
    return {name: e["reference"] for name, e in entries.items()
            if isinstance(e.get("reference"), dict)}


def stale_reasons(rows: list[dict], suite: dict[str, dict] | None, budget_scale: float) -> list[str]:
    """Why a report no longer shows what its suite file asks for today; empty when it does.

    "Stale" is checked entry by entry, for the entries that ran, against today's suite file:
    the entry is gone from it; its budget changed (the run's requested steps are not the
    suite's ``total_steps`` times the bench's budget scale; at a scale below 1 a budget raised
    to one update is accepted); at full scale, its seeds changed; its config overrides, env
    kwargs or evaluation episodes changed (where the report recorded them); or the reference
    budget the runs were made against differs from the suite's reference budget now. Its
    config is checked against the presets (`preset_reason`) only where the row carries the run's
    resolved config (``run_config``: reports written since it was recorded)."""
    if suite is None:
        return ["its suite file is gone or unreadable, so nothing here can be checked"]
    reasons = []
    for r in rows:
        if r.get("run_id") is None:
            continue
        name = r["entry"]
        now = suite.get(name)
        if now is None:
            reasons.append(f"{name}: no longer in the suite")
            continue
        want = float(now["total_steps"]) * float(budget_scale)
        asked = float(r["requested_steps"])
        if r.get("requested_steps_recorded", True) is False:  # the steps run: whole updates
            changed = abs(asked / want - 1.0) > BUDGET_TOLERANCE
        else:
            changed = asked != round(want) if budget_scale == 1.0 else asked < round(want)
        if changed:
            reasons.append(f"{name}: ran {asked:,.0f} steps per seed; the suite now asks for "
                           f"{want:,.0f}")
        plan_then = {k: v for k, v in (r.get("adaptive") or {}).items() if k != "runs"} or None
        plan_now = adaptive_plan(now.get("seeds"))
        if plan_then is not None or plan_now is not None:
            if plan_then != plan_now:
                reasons.append(f"{name}: ran seeds {plan_then or r['seeds']}; the suite now asks "
                               f"for {plan_now or now.get('seeds')}")
        elif budget_scale == 1.0 and int(r["seeds"]) != int(now["seeds"]):
            reasons.append(f"{name}: ran {r['seeds']} seeds; the suite now asks for "
                           f"{now['seeds']}")
        for key in ("config", "env_kwargs", "eval_episodes"):  # None recorded: none asked for
            if key in r and not same_value(r[key], known_then(r, key, now.get(key))):
                reasons.append(f"{name}: its {key} is not the suite's now ({r[key]} vs "
                               f"{now.get(key)})")
        preset = preset_reason(r)
        if preset:
            reasons.append(preset)
        then = r.get("reference_budget_at_run")
        ref_now = (now.get("reference") or {}).get("budget")
        if then is not None and ref_now is not None and float(then) != float(ref_now):
            reasons.append(f"{name}: the reference budget was {float(then):,.0f} steps when it "
                           f"ran; the suite's reference now says {float(ref_now):,.0f}")
    return reasons
