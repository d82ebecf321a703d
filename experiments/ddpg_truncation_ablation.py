"""Reading 000's lesson, measured: DDPG on Pendulum-v1 with time limits bootstrapped (right)
versus time limits treated as termination (the classic bug, ``bootstrap_truncation=False``).

Pendulum never terminates; every episode ends by the 200-step time limit. Treating that limit
as termination tells the critic the last state of every episode is worth 0, although the
pendulum would go on collecting (negative) reward.

    python experiments/ddpg_truncation_ablation.py [--seeds 16] [--total-steps 50000] [--json P]

Prints the IQM of the final evaluation returns with a 95% stratified-bootstrap CI for both
variants, Welch's t-test and the probability that the right variant beats the buggy one, and
the seed-by-seed comparison: both variants train seed ``i`` from the same key (the same
initial networks, the same evaluation starts), so their returns pair by seed.
Both runs are recorded in the run store.
"""

import argparse

import numpy as np

import jaxrl
from jaxrl import stats
from jaxrl.runs.provenance import measured_here, run_facts, write_results
from jaxrl.studies.verdicts import signed_rank_test


def paired(right, wrong) -> dict:
    """Seed-by-seed differences ``right - wrong`` ``[seeds]``: their mean, range, how many
    favour each variant, and the Wilcoxon signed-rank test's two-sided p of a zero median."""
    d = np.asarray(right, float) - np.asarray(wrong, float)
    return {"mean_difference": float(d.mean()), "min_difference": float(d.min()),
            "max_difference": float(d.max()), "right_higher": int(np.sum(d > 0)),
            "wrong_higher": int(np.sum(d < 0)), "signed_rank_p": signed_rank_test(d, 0.0)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--total-steps", type=int, default=50_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    about = measured_here()  # the code this process loaded, as it starts
    returns, facts = {}, {}
    for label, bootstrap in (("bootstrap truncation", True), ("truncation = termination", False)):
        result = jaxrl.train("ddpg", env="Pendulum-v1", seeds=args.seeds,
                             total_steps=args.total_steps, progress=False,
                             bootstrap_truncation=bootstrap)
        returns[label], facts[label] = result.final_eval_return, run_facts(result)
        print(f"{label:>26}: run {result.run_id}", flush=True)
    right, wrong = returns.values()
    c = stats.compare(right, wrong)
    print(f"{'variant':>26} {'IQM':>8} {'95% CI':>20}")
    for label, side in zip(returns, ("a", "b")):
        print(f"{label:>26} {c[f'iqm_{side}']:>8.1f} "
              f"[{c[f'iqm_{side}_ci_low']:.1f}, {c[f'iqm_{side}_ci_high']:.1f}]")
    print(f"Welch t = {c['welch_t']:.2f}, p = {c['welch_p']:.3g}; "
          f"P(bootstrap > termination) = {c['prob_improvement']:.2f} "
          f"[{c['prob_improvement_ci_low']:.2f}, {c['prob_improvement_ci_high']:.2f}]")
    p = paired(right, wrong)
    print(f"seed by seed: bootstrap - termination {p['mean_difference']:.1f} on average "
          f"({p['min_difference']:.1f} to {p['max_difference']:.1f}), higher on "
          f"{p['right_higher']} seeds, lower on {p['wrong_higher']}; signed-rank p "
          f"{p['signed_rank_p']:.3g}")
    write_results(args.json, about, per_seed={k: [float(x) for x in v] for k, v in returns.items()},
                  runs=facts, comparison=c, paired=p)


if __name__ == "__main__":
    main()
