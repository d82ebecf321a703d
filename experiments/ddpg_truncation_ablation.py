"""Reading 000's lesson, measured: DDPG on Pendulum-v1 with time limits bootstrapped (right)
versus time limits treated as termination (the classic bug, ``bootstrap_truncation=False``).

Pendulum never terminates; every episode ends by the 200-step time limit. Treating that limit
as termination tells the critic the last state of every episode is worth 0, although the
pendulum would go on collecting (negative) reward.

    python experiments/ddpg_truncation_ablation.py [--seeds 16] [--total-steps 50000] [--json P]

Prints the IQM of the final evaluation returns with a 95% stratified-bootstrap CI for both
variants, Welch's t-test and the probability that the right variant beats the buggy one.
Both runs are recorded in the run store.
"""

import argparse
import json

import jaxrl
from jaxrl import stats
from jaxrl.runs.provenance import measured_here, run_facts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--total-steps", type=int, default=50_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
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
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"about": measured_here(),
                       "per_seed": {k: [float(x) for x in v] for k, v in returns.items()},
                       "runs": facts, "comparison": c}, f, indent=2)


if __name__ == "__main__":
    main()
