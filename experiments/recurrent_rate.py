"""Env-steps/s of PPO with a recurrent core against the feed-forward PPO on the same task: 4
seeds, evaluation off, in memory (nothing stored). One JSON line per run.

    JAXRL_CPU_DEVICES=1 python experiments/recurrent_rate.py gru [ENV] [TOTAL_STEPS]
    JAXRL_CPU_DEVICES=1 python experiments/recurrent_rate.py none [ENV] [TOTAL_STEPS]
"""

import json
import sys

import jaxrl


def main() -> None:
    rnn = sys.argv[1]
    env = sys.argv[2] if len(sys.argv) > 2 else "MemoryChain-bsuite"
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    extra = {} if rnn == "none" else {"rnn": rnn}
    result = jaxrl.train("ppo", env, seeds=4, total_steps=steps, store=False, progress=False,
                         eval_episodes=0, **extra)
    print(json.dumps({"rnn": rnn, "env": env, "total_steps": steps,
                      "env_steps_per_second": round(result.env_steps_per_second),
                      "compile_seconds": round(result.compile_seconds, 1),
                      "run_seconds": round(result.run_seconds, 1)}))


if __name__ == "__main__":
    main()
