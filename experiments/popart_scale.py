"""PopArt's claim, measured: rewards multiplied by 1,000 break an agent tuned for rewards of
order 1 (the value loss swamps the gradient and its clipping), and PopArt makes the scale not
matter.

For each algorithm (default PPO and A2C on CartPole-v1), four runs of ``--seeds`` seeds each:

* ``unscaled``: the env as is, no PopArt (the reference);
* ``x1000``: rewards x 1,000 (``envs.make(..., reward_scale=1000)``), no PopArt;
* ``x1000 + PopArt``: rewards x 1,000, ``popart=True``;
* ``unscaled + PopArt``: PopArt's cost where nothing needs it.

Returns are reported in the env's own units (the scaled runs' returns are unscaled back), as
the IQM of the final evaluation returns with a 95% stratified-bootstrap CI; each arm is also
compared with ``unscaled`` (probability of improvement and Welch's t-test), and the two PopArt
arms with each other (PopArt's claim: the scale no longer matters). A PopArt arm records each
seed's final target scale ``sigma`` (PopArt divides the advantages by it).

    python experiments/popart_scale.py [--algos ppo,a2c] [--seeds 8] [--total-steps 300000]
                                       [--env CartPole-v1] [--json P]
"""

import argparse

import jaxrl
from jaxrl import stats
from jaxrl.runs.provenance import measured_here, run_facts, write_results

ARMS = {
    "unscaled": (None, False),
    "x1000": (1000.0, False),
    "x1000 + PopArt": (1000.0, True),
    "unscaled + PopArt": (None, True),
}


def run_arm(algo: str, env: str, seeds: int, total_steps: int, scale, popart: bool):
    env_kwargs = {"reward_scale": scale} if scale else None
    return jaxrl.train(algo, env=env, seeds=seeds, total_steps=total_steps, progress=False,
                       popart=popart, env_kwargs=env_kwargs,
                       meta={"experiment": "popart_scale"})


def final_per_seed(metrics, name: str) -> list[float]:
    """``name``'s value at each seed's last update, ``[seeds]``, from a result's metrics
    (one row per seed and update)."""
    last = metrics.sort_values("update").groupby("seed")[name].last()
    return [float(v) for v in last.sort_index()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--algos", default="ppo,a2c")
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--total-steps", type=int, default=300_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    about = measured_here()  # the code this process loaded, as it starts
    report = {}
    for algo in args.algos.split(","):
        returns, facts = {}, {}
        for label, (scale, popart) in ARMS.items():
            result = run_arm(algo, args.env, args.seeds, args.total_steps, scale, popart)
            returns[label], facts[label] = result.final_eval_return, run_facts(result)
            if popart:
                facts[label]["popart_sigma_final"] = final_per_seed(result.metrics,
                                                                    "popart_sigma")
            print(f"{algo} {label:>18}: run {result.run_id}, compile {result.compile_seconds:.1f}"
                  f" s, run {result.run_seconds:.1f} s", flush=True)
        print(f"\n{algo} on {args.env}, {args.seeds} seeds x {args.total_steps} steps")
        print(f"{'arm':>18} {'IQM':>7} {'95% CI':>16} {'P(arm > unscaled)':>18} {'Welch p':>8}")
        rows = {}
        for label, x in returns.items():
            s = stats.summarize(x)
            c = stats.compare(x, returns["unscaled"])
            rows[label] = {"per_seed": [float(v) for v in x], "summary": s, "vs_unscaled": c,
                           **facts[label]}
            print(f"{label:>18} {s['iqm']:>7.1f} [{s['iqm_ci_low']:>6.1f}, {s['iqm_ci_high']:>6.1f}]"
                  f" {c['prob_improvement']:>18.2f} {c['welch_p']:>8.3g}")
        both = stats.compare(returns["x1000 + PopArt"], returns["unscaled + PopArt"])
        print(f"x1000 + PopArt against unscaled + PopArt: P(improvement) "
              f"{both['prob_improvement']:.2f}, Welch p {both['welch_p']:.3g}")
        report[algo] = {**rows, "popart_x1000_vs_unscaled": both}
    write_results(args.json, about, results=report)


if __name__ == "__main__":
    main()
