"""The coverage study behind `jaxrl.studies.verdicts`: how candidate intervals of the mean cover it, and
how often each verdict rule calls a side, on synthetic seeds shaped like RL returns.

    python experiments/verdict_study.py --out benchmarks/verdict-study

For 8 and 16 seeds drawn ``--draws`` times from each distribution (normal; skewed gamma(4);
bounded near a ceiling, 500 x beta(8, 1) like CartPole's; and two bimodal mixtures, a quarter
and a half of the seeds failing near 300 while the rest succeed near 3,300, like a MuJoCo task
where some seeds never learn):

* each interval's coverage of the true mean and its median width: Student's t, the percentile
  bootstrap, the bootstrap-t, and the bootstrap-t bounded by the seeds' range (the verdict's);
* how often the split detector flags the sample (a false alarm on the unimodal ones);
* each rule's calls when the truth is below the reference (the reference half a standard
  deviation above the true mean) and when the reference is the true mean: the old rule (the
  bootstrap-t interval alone) against `verdicts.call`.

Writes ``results.json`` and ``report.md`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from jaxrl import stats
from jaxrl.studies import verdicts


def mixture(fail_share: float):
    """Seeds that fail (N(300, 50)) with probability ``fail_share``, else succeed (N(3300,
    300)); its true mean and standard deviation."""
    def draw(rng, shape):
        fail = rng.random(shape) < fail_share
        return np.where(fail, rng.normal(300, 50, shape), rng.normal(3300, 300, shape))
    m = fail_share * 300 + (1 - fail_share) * 3300
    var = (fail_share * (50 ** 2 + 300 ** 2) + (1 - fail_share) * (300 ** 2 + 3300 ** 2)
           - m ** 2)
    return draw, m, float(np.sqrt(var))


DISTRIBUTIONS = {
    "normal(100, 10)": (lambda rng, s: rng.normal(100, 10, s), 100.0, 10.0),
    "gamma(4) (skewed)": (lambda rng, s: rng.gamma(4.0, 1.0, s), 4.0, 2.0),
    "500 x beta(8, 1) (bounded)": (lambda rng, s: 500 * rng.beta(8.0, 1.0, s), 500 * 8 / 9,
                                   500 * np.sqrt(8 / (81 * 10))),
    "a quarter failing": mixture(0.25),
    "half failing": mixture(0.5),
}


def intervals(x, seed: int, reps: int) -> dict[str, tuple[float, float]]:
    """The candidate intervals of the mean of ``x``."""
    boot_t = stats.bootstrap_t_ci(x, 0.95, reps, seed)
    return {"student t": stats.t_interval(x, 0.95),
            "percentile bootstrap": stats.bootstrap_ci(x, "mean", 0.95, reps, seed),
            "bootstrap-t": boot_t,
            "bootstrap-t bounded (verdict)": verdicts.bounded_interval(*boot_t, x)}


def old_call(reference: float, low: float, high: float) -> str:
    """The rule the reports used before: the bootstrap-t interval alone."""
    return "above" if low > reference else "below" if high < reference else "inside"


def new_call(reference: float, low: float, high: float, x) -> str:
    """`verdicts.call`, its words reduced to one: above, below, inside, split, inconclusive."""
    return verdicts.call(reference, low, high, x).split(" ")[0].replace("reference", "inside")


def study(n: int, draws: int, reps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for name, (draw, truth, sd) in DISTRIBUTIONS.items():
        samples = draw(rng, (draws, n))
        cover: dict[str, list] = {}
        calls: dict[str, dict[str, dict[str, int]]] = {"truth below": {}, "truth equal": {}}
        flagged = 0
        for i, x in enumerate(samples):
            found = intervals(x, i, reps)
            for key, (lo, hi) in found.items():
                cover.setdefault(key, []).append((lo <= truth <= hi, hi - lo))
            flagged += verdicts.seed_split(x) is not None
            lo, hi = found["bootstrap-t bounded (verdict)"]
            raw_lo, raw_hi = found["bootstrap-t"]
            for case, reference in (("truth below", truth + 0.5 * sd), ("truth equal", truth)):
                for rule, word in (("bootstrap-t alone", old_call(reference, raw_lo, raw_hi)),
                                   ("verdicts.call", new_call(reference, lo, hi, x))):
                    tally = calls[case].setdefault(rule, {})
                    tally[word] = tally.get(word, 0) + 1
        out[name] = {
            "truth": truth, "sd": sd,
            "intervals": {k: {"coverage": float(np.mean([c for c, _ in v])),
                              "median_width": float(np.median([w for _, w in v]))}
                          for k, v in cover.items()},
            "split_flagged": flagged / draws,
            "calls": {case: {rule: {w: c / draws for w, c in sorted(t.items())}
                             for rule, t in rules.items()} for case, rules in calls.items()},
        }
    return out


def markdown(results: dict, draws: int, reps: int) -> str:
    lines = ["# The verdict study: intervals and rules on synthetic seeds", "",
             f"`python experiments/verdict_study.py` ({draws} samples per cell, {reps} bootstrap "
             "resamples each; [results.json](results.json)). The reference is half a standard "
             "deviation of the seeds above the true mean for \"truth below\", and the true "
             "mean for \"truth equal\".", ""]
    for n, by_dist in results.items():
        lines += [f"## {n} seeds", "", "| seeds drawn from | interval | coverage | median width |",
                  "|---|---|---|---|"]
        for name, r in by_dist.items():
            for k, v in r["intervals"].items():
                lines.append(f"| {name} | {k} | {v['coverage']:.3f} | {v['median_width']:.4g} |")
        lines += ["", "| seeds drawn from | split flagged | case | rule | calls |", "|---|---|---|---|---|"]
        for name, r in by_dist.items():
            for case, rules in r["calls"].items():
                for rule, tally in rules.items():
                    shown = ", ".join(f"{w} {share:.3f}" for w, share in tally.items())
                    lines.append(f"| {name} | {r['split_flagged']:.3f} | {case} | {rule} | {shown} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="benchmarks/verdict-study")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=499)
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    results = {f"{n}": study(n, args.draws, args.reps, args.seed + n) for n in (8, 16)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(
        {"draws": args.draws, "reps": args.reps, "seed": args.seed,
         "rule": {"alpha": verdicts.ALPHA, "split_gap": verdicts.SPLIT_GAP,
                  "split_scale": verdicts.SPLIT_SCALE}, "results": results},
        indent=1) + "\n")
    (out / "report.md").write_text(markdown(results, args.draws, args.reps) + "\n")
    print((out / "report.md").read_text())


if __name__ == "__main__":
    main()
