"""Imitation from a stored PPO expert: behaviour cloning and GAIL on CartPole-v1 and Pendulum-v1.

    python experiments/imitation.py [--envs CartPole-v1,Pendulum-v1] [--episodes 25]
                                    [--seeds 8] [--json P]

Per env: train a PPO expert (2 seeds, the better one's policy is the expert), record
``--episodes`` deterministic episodes of it as demonstrations (`jaxrl.demos`), then train BC
and GAIL from them over ``--seeds`` seeds. Prints each arm's final evaluation return per seed,
its IQM with a 95% CI, its mean as a fraction of the demonstrations' mean return, and the
normalized score ``(R - R_random) / (R_expert - R_random)`` (``R_random``: a uniformly random
policy's mean return over 64 episodes), and GAIL's discriminator accuracy on expert and policy
pairs over training. Every run is recorded in the run store.
"""

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import envs
import jaxrl
from envs.wrappers import EpisodeStatistics
from jaxrl import stats
from jaxrl.parts.evaluate import eval_horizon
from jaxrl.runs.provenance import measured_here, run_facts, write_results

SETTINGS = {  # expert steps, BC samples, GAIL env steps (per seed)
    "CartPole-v1": (300_000, 200_000, 500_000),
    "Pendulum-v1": (1_000_000, 500_000, 2_000_000),
}


def random_return(env_name: str, episodes: int = 64) -> float:
    """Mean return of uniformly random actions over ``episodes`` whole episodes."""
    env, params = envs.make(env_name)
    env = EpisodeStatistics(env)
    space = env.action_space(params)
    horizon = eval_horizon(params)

    @jax.jit
    def run(key):
        _, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, episodes), params)

        def step(c, k):
            state, ended, ret = c
            a_key, s_key = jax.random.split(k)
            action = jax.vmap(space.sample)(jax.random.split(a_key, episodes))
            _, state, _, _, _, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(s_key, episodes), state, action, params)
            done = info["episode_done"]
            ret = jnp.where(done & ~ended, info["episode_return"], ret)
            return (state, ended | done, ret), None

        init = (state, jnp.zeros(episodes, bool), jnp.zeros(episodes))
        (_, _, ret), _ = jax.lax.scan(step, init, jax.random.split(key, horizon))
        return ret

    return float(np.mean(run(jax.random.key(123))))


def describe(name: str, returns: np.ndarray, demo_mean: float, rand: float) -> dict:
    s = stats.summarize(returns)
    out = {"per_seed": [float(x) for x in returns], **s,
           "fraction_of_expert": float(np.mean(returns) / demo_mean),
           "normalized_score": float((np.mean(returns) - rand) / (demo_mean - rand))}
    print(f"{name:>6}: IQM {s['iqm']:8.1f} [{s['iqm_ci_low']:8.1f}, {s['iqm_ci_high']:8.1f}]  "
          f"mean/expert {out['fraction_of_expert']:.3f}  normalized {out['normalized_score']:.3f}"
          f"  per seed {' '.join(f'{x:.0f}' for x in returns)}", flush=True)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--envs", default="CartPole-v1,Pendulum-v1")
    parser.add_argument("--episodes", type=int, default=25)
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    about = measured_here()  # the code this process loaded, as it starts
    report = {}
    for env in args.envs.split(","):
        expert_steps, bc_steps, gail_steps = SETTINGS[env]
        t0 = time.time()
        expert = jaxrl.train("ppo", env=env, seeds=2, total_steps=expert_steps, progress=False,
                             meta={"experiment": "imitation", "role": "expert"})
        best = int(np.argmax(expert.final_eval_return))
        demo_id = jaxrl.demos(expert.run_id, seed=best, episodes=args.episodes)
        demos = jaxrl.load_demos(demo_id)
        demo_mean, rand = float(np.mean(demos.returns)), random_return(env)
        print(f"\n{env}: expert run {expert.run_id} seed {best} (final eval "
              f"{expert.final_eval_return[best]:.1f}); demos {demo_id}: {len(demos.returns)} "
              f"episodes, {demos.num_steps} steps, mean return {demo_mean:.1f}; random policy "
              f"{rand:.1f}", flush=True)
        entry = {"expert": run_facts(expert), "expert_seed": best, "demo_id": demo_id,
                 "expert_final_eval": [float(x) for x in expert.final_eval_return],
                 "demo_returns": [float(r) for r in demos.returns], "random_return": rand}
        bc = jaxrl.train("bc", env=env, seeds=args.seeds, total_steps=bc_steps, progress=False,
                         demos=demo_id, meta={"experiment": "imitation"})
        entry["bc"] = describe("BC", bc.final_eval_return, demo_mean, rand)
        entry["bc"].update(run_facts(bc))
        g = jaxrl.train("gail", env=env, seeds=args.seeds, total_steps=gail_steps,
                        progress=False, demos=demo_id, meta={"experiment": "imitation"})
        entry["gail"] = describe("GAIL", g.final_eval_return, demo_mean, rand)
        m = g.metrics.copy()
        m["tenth"] = np.minimum((10 * m["update"] / (m["update"].max() + 1)).astype(int), 9)
        acc = m.groupby("tenth")[["disc_accuracy_expert", "disc_accuracy_policy",
                                  "learned_reward_mean", "episode_return_mean"]].mean()
        print("GAIL over training (tenths): discriminator accuracy on expert / policy pairs, "
              "mean learned reward, training return")
        print(acc.round(3).to_string())
        entry["gail"].update(run_facts(g), by_tenth=acc.reset_index().to_dict(orient="list"))
        entry["wall_seconds"] = time.time() - t0
        report[env] = entry
    write_results(args.json, about, results=report)


if __name__ == "__main__":
    main()
