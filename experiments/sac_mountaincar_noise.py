"""Why `sac/mountaincar-ou` explores with Ornstein-Uhlenbeck noise of ``ou_theta=2``: SAC on
MountainCarContinuous-v0 at the zoo's 50k steps, three exploration noises, the preset
otherwise:

* ``white``: a fresh normal draw each step (jaxrl's default);
* ``ou theta 0.15``: OpenAI baselines' OU rate (correlated over ~670 steps: one push a whole
  episode);
* ``ou theta 2``: the preset (~50 steps: one swing of the car).

Per arm: each seed's final deterministic evaluation return, how many seeds solved the task
(return above 90: the car reached the flag), its IQM with a 95% CI and cost.

    python experiments/sac_mountaincar_noise.py [--seeds 8] [--total-steps 50000] [--json P]
"""

import argparse

import numpy as np

import jaxrl
from jaxrl import presets, stats
from jaxrl.runs.provenance import measured_here, run_facts, write_results

ENV = "MountainCarContinuous-v0"
SOLVED = 90.0  # the flag pays 100 less the actions' cost; a car that never reaches it ends near 0
ARMS = {
    "white": {"action_noise": "white"},
    "ou theta 0.15": {"action_noise": "ou", "ou_theta": 0.15},
    "ou theta 2": {},
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--total-steps", type=int, default=50_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    about = measured_here()  # the code this process loaded, as it starts
    preset = presets.load("sac/mountaincar-ou")
    report = {}
    for label, change in ARMS.items():
        result = jaxrl.train("sac", env=ENV, seeds=args.seeds, total_steps=args.total_steps,
                             progress=False, meta={"experiment": "sac_mountaincar_noise"},
                             **{**preset, **change})
        r = result.final_eval_return
        report[label] = {"per_seed": [float(x) for x in r], "solved": int(np.sum(r > SOLVED)),
                         "summary": stats.summarize(r), **run_facts(result)}
        print(f"{label:>14}: solved {report[label]['solved']} of {args.seeds}; per seed "
              f"{' '.join(f'{x:.1f}' for x in r)}; run {result.run_id}, compile "
              f"{result.compile_seconds:.1f} s, {result.env_steps_per_second:,.0f} env-steps/s",
              flush=True)
    write_results(args.json, about, solved_above=SOLVED, results=report)


if __name__ == "__main__":
    main()
