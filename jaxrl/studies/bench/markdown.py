"""A benchmark's ``report.md``: a banner where the report is stale or re-rendered without its
store, how the numbers were computed, one row per entry (no verdict or budget columns in a
smoke run), a summary line counting verdicts and flagged budgets, per-seed values and the
references."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxrl.measures import MEASURES
from jaxrl.repo_data import REPO, SUITES_DIR
from jaxrl.runs.report import compile_text, frames_text
from jaxrl.studies import verdicts
from jaxrl.studies.bench.judge import (
    MIN_SEEDS,
    VERDICTS,
    budget_text,
    ratio_text,
    suite_file,
    verdict_kind,
)


def _fmt(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "–"
    return f"{0.0 if round(x, digits) == 0 else x:,.{digits}f}"  # no "-0.0"


def measure_text(row: dict) -> str:
    """A row's measure, with "sampled policy" where its entry evaluated the policy's sampled
    actions (the engine option ``eval_sample``) rather than its mode."""
    sampled = (row.get("config") or {}).get("eval_sample") and row["measure"] == "final_eval"
    return f"{row['measure']} (sampled policy)" if sampled else row["measure"]


def _level(confidence: float) -> str:
    """``95%``, ``98.75%``."""
    return f"{confidence * 100:.4g}%"


def _ours(r: dict, confidence: float) -> tuple[str, str]:
    """The table's two cells of our numbers: mean [bootstrap-t CI] and IQM [bootstrap CI]; with
    fewer than `MIN_SEEDS` finite seeds, the per-seed values and the plain IQM instead. Where
    the verdict was decided on another interval (an adaptive entry's, at its per-look level),
    the mean's cell prints that one, with its level."""
    if r.get("iqm") is None:
        return "–", "–"
    if r.get("n_finite", 0) < MIN_SEEDS:
        values = ", ".join(_fmt(v) for v in r["per_seed"])
        return f"per seed: {values}", _fmt(r["iqm"])
    low, high, level = r["mean_ci_low"], r["mean_ci_high"], ""
    if r.get("decision_ci_low") is not None and r.get("decision_confidence") != confidence:
        low, high = r["decision_ci_low"], r["decision_ci_high"]
        level = f" ({_level(r['decision_confidence'])} CI, the verdict's)"
    return (f"{_fmt(r['mean'])} [{_fmt(low)}, {_fmt(high)}]{level}",
            f"{_fmt(r['iqm'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]")


def _spread(r: dict) -> str:
    """The seeds' spread: their range, the mean of the worst quarter, and a split where the
    seeds split (the share that succeeds, its exact interval, and their mean; where a file
    told the seeds apart, what it measured, its rule, the failing seeds and the file)."""
    if r.get("seeds_min") is None:
        return "–"
    text = f"[{_fmt(r['seeds_min'])}, {_fmt(r['seeds_max'])}]; worst 25%: {_fmt(r['cvar'])}"
    split = r.get("split")
    if split:
        evidence = r.get("split_evidence") if split.get("by") else None
        told = "" if evidence is None else (
            f" by {evidence['by']} (seeds {', '.join(map(str, evidence['failing']))} "
            f"{evidence['rule']}; `{evidence['source']}`)")
        text += (f"; **split**{told}: {split['succeeding']} of {split['n']} succeed "
                 f"[{split['share_low']:.2f}, {split['share_high']:.2f}], their mean "
                 f"{_fmt(split['success_mean'])}")
    if r.get("rank_p") is not None:
        text += f"; {r['seeds_below']} of {r['n_finite']} below ref (signed-rank p {r['rank_p']:.3f})"
    return text


def banner(report: dict) -> list[str]:
    """Lines under the title of a report that is not, or cannot be, rebuilt from its runs."""
    lines = []
    if report.get("source") == "results.json":
        lines += [f"> Re-rendered on {report['report_written_at'][:10]} from this folder's "
                  "`results.json` (first written "
                  f"{(report.get('first_written_at') or '?')[:10]}) by `jaxrl runs bench "
                  "--from-results`: its run store was not committed, so the per-seed values are "
                  "as recorded and judged by today's rules against today's references. "
                  + ("" if any("config" in r for r in report["entries"]) else
                     "It records neither the entries' config overrides nor the runs' resolved "
                     "configs, so only their budgets, seeds and reference budgets were checked "
                     "against today's suite, not their configs or presets. ")
                  + "`curves.png` is redrawn from it: an entry whose curve the file kept is "
                  "drawn as a curve, one written before reports kept curves as its final "
                  "values per seed.", ""]
    carried = [r["entry"] for r in report["entries"] if r.get("carried_from")]
    if carried:
        lines += [f"> {len(carried)} of {len(report['entries'])} rows are carried from the "
                  "`results.json` of an earlier run store that was not kept (bench "
                  f"`{report.get('carried_from')}`), as recorded there: "
                  + ", ".join(f"`{e}`" for e in carried) + ".", ""]
    if report.get("stale"):
        lines += ["> **Stale: this report no longer matches its suite file** "
                  f"(`{suite_file_shown(report)}`), so it is no result "
                  "for that suite as it stands:", ">"]
        lines += [f"> * {reason}" for reason in report["stale"]]
        lines.append("")
    return lines


def suite_file_shown(report: dict) -> str:
    """The suite file ``report`` was checked against (`judge.suite_file`; the one it was read
    from where that is gone), relative to the repository where it lies in it."""
    by_name = report.get("source") == "results.json"
    path = suite_file(report.get("suite"), report.get("suite_path"), by_name) or Path(
        report.get("suite_path") or SUITES_DIR / f"{report.get('suite')}.yaml")
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:  # outside the repository
        return str(path)


def markdown(report: dict) -> str:
    scale = report.get("budget_scale", 1.0)
    smoke = scale != 1.0
    title = report["title"] + (f" (budget x{scale:g}: a smoke run, not a result)" if smoke else "")
    lines = [f"# {title}", "", *banner(report)]
    if report.get("note"):
        lines += [report["note"], ""]
    method = verdicts.method(report["confidence"], report["bootstrap_reps"], MIN_SEEDS)
    lines += [f"Bench `{report['bench_id']}` (suite `{report['suite']}`); devices: "
              f"{', '.join(report['devices']) or '–'}; commit "
              f"{', '.join(c[:10] for c in report['git_commits']) or '–'}"
              + (" (with uncommitted changes: each run's code.diff in the store has them)"
                 if report.get("git_dirty") else "") + "; report written "
              f"{report['report_written_at']}.", "",
              "Ours, of the measure the reference uses ("
              + "; ".join(f"`{k}` = {v}" for k, v in MEASURES.items()) + "): the mean with "
              f"its interval; the verdict is {method}. Beside them, the seeds' range, the mean "
              "of their worst quarter, a split where there is one, and the IQM "
              f"(interquartile mean) with a "
              f"{int(report['confidence'] * 100)}% percentile-bootstrap CI "
              f"({report['bootstrap_reps']} resamples), descriptive only: at a few seeds a "
              "percentile bootstrap is about the range of the seeds. Fewer than "
              f"{MIN_SEEDS} seeds: the per-seed values, and no verdict."
              + (" A smoke run (budget scaled down) gives no verdict." if smoke else
                 " A budget more than 5% away from the reference's is flagged with its ratio.")
              + " Wall s runs from an entry's start to its end, compiles, pauses and resumed "
                "sessions included; env-steps/s is every seed's steps over run s, the time its "
                "training programs ran."
              + (" An entry with `seeds: adaptive` took batches of seeds until its verdict found "
                 "a side or it reached its cap; each look is judged at alpha / (the batches it "
                 "may take), so over every look a side that is not there is found at most alpha "
                 "of the time, and its verdict says the seeds and batches it took (its wall "
                 "time and rate are its first batch's)."
                 if any(r.get("adaptive") for r in report["entries"]) else ""),
              ""]
    # a scaled-down run still states its budget against the reference's; it only gives no verdict
    level = _level(report["confidence"])
    marked = any(r.get("decision_ci_low") is not None
                 and r.get("decision_confidence") != report["confidence"]
                 for r in report["entries"])
    head = ["entry", "steps/seed", "budget vs reference's", "seeds", "measure",
            f"ours: mean [{level} CI{' unless marked' if marked else ''}]", f"IQM [{level} CI]", "seeds: range; worst 25%", "reference"]
    head += [] if smoke else ["verdict"]
    head += ["wall s", "run s", "compile s", "env-steps/s (of run s)", "devices"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in report["entries"]:
        mean_cell, iqm_cell = _ours(r, report["confidence"])
        share = r.get("budget_share")
        steps = f"{r['total_steps']:,}" + frames_text(r['total_steps'], r.get("frames_per_step"))
        cells = [r["entry"], steps, "–" if share is None else
                 (ratio_text(share) if budget_text(share) else "same")]
        cells += [str(r["seeds"]), measure_text(r), mean_cell, iqm_cell, _spread(r),
                  _fmt(r["reference"])]
        if not smoke:
            cells.append(r["verdict"] + (" (see note)" if r.get("reference_note") and
                                         r["verdict"].startswith(VERDICTS[1:]) else ""))
        cells += [_fmt(r["wall_seconds"], 0), _fmt(r.get("run_seconds"), 0), compile_text(r),
                  _fmt(r["env_steps_per_second"], 0),
                  r["devices"] or "–"]
        lines.append("| " + " | ".join(cells) + " |")
    ran = [r for r in report["entries"] if r["run_id"]]
    walls = [r["wall_seconds"] for r in ran if r["wall_seconds"] is not None]
    summary = (f"{len(ran)} of {len(report['entries'])} entries run, {sum(walls) / 60:.1f} min "
               "of wall time in all (compiles included)")
    if not smoke:
        calls = [verdict_kind(r["verdict"]) for r in ran]
        counts = {v: calls.count(v) for v in VERDICTS}
        few = sum("too few seeds" in r["verdict"] for r in ran)
        flagged = [r.get("budget_share") for r in ran if budget_text(r.get("budget_share"))]
        summary += (f"; verdicts: reference inside the CI {counts['reference inside CI']}, "
                    f"above {counts['above reference']}, below {counts['below reference']}, "
                    f"split {counts['split']}, inconclusive {counts['inconclusive']}; "
                    f"too few seeds for a verdict: {few}; at more than the reference's budget: "
                    f"{sum(s > 1 for s in flagged)}, at less: {sum(s < 1 for s in flagged)}")
    unfinished = [f"`{r['entry']}` ({r['status']})" for r in ran if r["status"] != "finished"]
    if unfinished:
        summary += f"; not finished: {', '.join(unfinished)}"
    lines += ["", summary + ".", "", "Per seed:", ""]
    for r in report["entries"]:
        if r["per_seed"]:
            values = ", ".join(_fmt(v) for v in r["per_seed"])
            lines.append(f"* {r['entry']} ({measure_text(r)}): {values} (run `{r['run_id']}`)")
    lines += ["", "References:", ""]
    for r in report["entries"]:
        if r["reference"] is not None:
            budget = (f", at {float(r['reference_budget']):,.0f} env steps"
                      + frames_text(r["reference_budget"], r.get("frames_per_step"))
                      if r.get("reference_budget") is not None else "")
            ratio = budget_text(r.get("budget_share"))
            ratio = f"; ours is {ratio.removeprefix('at ')}" if ratio else ""
            note = f" {r['reference_note']}" if r.get("reference_note") else ""
            reading = (f" +- {r['reference_uncertainty']:g} (a reading off a plot: no verdict "
                       "finer than it)" if r.get("reference_uncertainty") else "")
            lines.append(f"* {r['entry']}: {_fmt(r['reference'])}{reading} ({r['measure']}{budget}"
                         f"{ratio}): {r['reference_source']}.{note}")
    floors = [r for r in report["entries"] if r.get("floor")]
    if floors:
        lines += ["", "The random policy's return (drawn in the figure as a grey dotted line):",
                  ""]
        lines += [f"* {r['entry']}: {_fmt(r['floor']['value'], 3)} ({r['floor']['source']})"
                  for r in floors]
    lines += ["", "![curves](curves.png)", ""]
    return "\n".join(lines)
