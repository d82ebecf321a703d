"""Where PPO's time goes on CPU (companion to perf_ppo.py, same configuration).

Times, for 1/8/... seeds vmapped, programs that do cumulatively more of one PPO update:

* ``rollout``: collecting 5 envs x 100 steps;
* ``+advantages``: plus the value passes and GAE (`onpolicy.make_batch`);
* ``+update``: plus 5 epochs x 5 minibatches of SGD (no rollout metrics);
* ``train_step``: the real `ppo.ALGORITHM.train_step` (diagnostics included);
* ``fused``: `make_train` (init + every update in one program, no host loop, no eval);

and the floor set by the networks alone: forward + backward of the two 64x64 tanh MLPs on a
100-sample minibatch, 25 times per update, with a plain SGD step (no loss, no Adam).

Each program is compiled first, then run ``--reps`` times; the fastest run is reported. Pin it
(``taskset -c 1``) and compare runs taken close together: the machine is shared.

    python experiments/perf_breakdown.py [--seeds 1 8] [--total-steps 200000] [--reps 3]
"""

import argparse
import time

import jax
import jax.numpy as jnp

from jaxrl import api
from jaxrl.algos import onpolicy, ppo
from jaxrl.engine import members, spec

CONFIG = dict(num_envs=5, num_steps=100, update_epochs=5, num_minibatches=5, hidden=(64, 64),
              activation="tanh")


def best_time(fn, *args, reps: int) -> float:
    jax.block_until_ready(fn(*args))  # compile + warm up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return min(times)


def programs(config, env, env_params, num_updates):
    config = config.static()  # what the algorithm's functions take: no traced fields
    net = onpolicy.make_network(config, env, env_params)

    def loop(body):
        return lambda state: jax.lax.scan(body, state, None, length=num_updates)

    def rollout(s, _):
        key, rollout_key = jax.random.split(s.key)
        carry, _, traj = onpolicy.rollout(s, rollout_key, config, env, env_params, net)
        return s.replace(carry=carry, key=key), traj.reward.sum()

    def advantages(s, _):
        key, rollout_key = jax.random.split(s.key)
        carry, _, traj = onpolicy.rollout(s, rollout_key, config, env, env_params, net)
        batch = onpolicy.make_batch(s, traj, traj.reward, config, net)
        return s.replace(carry=carry, key=key), batch.advantage.sum()

    def update(s, _):
        key, rollout_key, update_key = jax.random.split(s.key, 3)
        carry, _, traj = onpolicy.rollout(s, rollout_key, config, env, env_params, net)
        batch = onpolicy.make_batch(s, traj, traj.reward, config, net)
        updated = ppo.update(s, batch, update_key, config, net)
        return s.replace(carry=carry, key=key, params=updated.params, opt_state=updated.opt_state,
                         env_steps=s.env_steps + config.steps_per_update), updated.metrics["entropy"]

    def train_step(s, _):
        return ppo.ALGORITHM.train_step(s, config, env, env_params)

    return {"rollout": loop(rollout), "+advantages": loop(advantages), "+update": loop(update),
            "train_step": loop(train_step)}


def network_floor(seeds: int, config, num_updates: int, reps: int) -> float:
    """Seconds for the networks' forward + backward alone, as often as the update does them."""
    steps = num_updates * config.update_epochs * config.num_minibatches
    batch = config.steps_per_update // config.num_minibatches
    key = jax.random.key(0)
    sizes = (4, *config.hidden)
    nets = [[jax.random.normal(key, (i, o)) * 0.1 for i, o in zip(sizes, (*config.hidden, out))]
            for out in (2, 1)]
    nets = jax.tree.map(lambda a: jnp.broadcast_to(a, (seeds, *a.shape)), nets)
    x = jax.random.normal(key, (seeds, batch, 4))

    def mlp(layers, h):
        for w in layers[:-1]:
            h = jnp.tanh(h @ w)
        return h @ layers[-1]

    def run(nets, x):
        loss = lambda ps: sum(jnp.sum(mlp(p, x)) for p in ps)

        def step(ps, _):
            return jax.tree.map(lambda p, g: p - 1e-6 * g, ps, jax.grad(loss)(ps)), None

        return jax.lax.scan(step, nets, None, length=steps)[0]

    return best_time(jax.jit(jax.vmap(run)), nets, x, reps=reps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--total-steps", type=int, default=200_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    _, env, env_params, config, num_updates = spec.resolve(
        "ppo", "CartPole-v1", args.total_steps, 1, **CONFIG)
    fused = api.make_train("ppo", "CartPole-v1", args.total_steps, **CONFIG)
    print(f"jax {jax.__version__}, {num_updates} updates per seed")
    for seeds in args.seeds:
        keys = members.seed_keys(0, seeds)
        states = jax.jit(jax.vmap(lambda k: ppo.ALGORITHM.init(k, env, env_params, config)))(keys)
        rows = {name: best_time(jax.jit(jax.vmap(fn)), states, reps=args.reps)
                for name, fn in programs(config, env, env_params, num_updates).items()}
        rows["fused"] = best_time(jax.jit(jax.vmap(fused)), keys, reps=args.reps)
        rows["networks alone"] = network_floor(seeds, config, num_updates, args.reps)
        steps = seeds * num_updates * config.steps_per_update
        for name, secs in rows.items():
            print(f"seeds {seeds:3d}  {name:15s} {secs:7.2f} s  {steps / secs:10,.0f} env-steps/s",
                  flush=True)


if __name__ == "__main__":
    main()
