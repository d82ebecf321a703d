"""What one replay minibatch costs, by buffer capacity, for two ways of drawing it:

* ``uniform``: jaxrl's `jaxrl.parts.buffers.uniform.sample`, ``batch`` slot indices drawn with
  replacement (`jax.random.randint` over the filled slots), then a gather: O(batch) work.
* ``choice``: indices drawn *without* replacement with `jax.random.choice(..., replace=False,
  p=mask / filled)` over every slot, then the same gather. This is how rejax 0.1.3's
  ``ReplayBuffer.sample`` draws (read from its source); JAX draws it with a Gumbel top-k over all
  ``capacity`` slots, so its work grows with the capacity, not the batch.

The buffer holds brax hopper's SAC transitions (obs 11, action 3, reward, done, next obs) and is
full. Each timing is one jitted `lax.scan` of ``DRAWS`` draws, best of 3 after a compile, so the
per-call dispatch is not in it. Prints one JSON line per (method, capacity)::

    JAXRL_CPU_DEVICES=1 python experiments/replay_sample_cost.py [members] [capacities...]

``members`` (default 1) vmaps that many buffers, as a seed-batched program holds them.
"""

import json
import sys
import time

import jax
import jax.numpy as jnp

from jaxrl.parts.buffers import uniform

BATCH = 128
DRAWS = 64
OBS, ACT = 11, 3


def full_buffer(capacity: int) -> uniform.ReplayState:
    """A full ``capacity``-slot buffer of hopper-shaped transitions (zeros: values do not matter
    to the cost)."""
    item = {"obs": jnp.zeros(OBS), "action": jnp.zeros(ACT), "reward": jnp.zeros(()),
            "done": jnp.zeros((), bool), "next_obs": jnp.zeros(OBS)}
    state = uniform.init(item, capacity)
    return state.replace(size=jnp.asarray(capacity, jnp.int32))


def draw_uniform(state: uniform.ReplayState, key: jax.Array):
    return uniform.sample(state, key, BATCH)[0]


def draw_choice(state: uniform.ReplayState, key: jax.Array):
    cap = uniform.capacity(state)
    p = (jnp.arange(cap) < state.size) / state.size
    indices = jax.random.choice(key, cap, (BATCH,), replace=False, p=p)
    return uniform.gather(state, indices)


def seconds_per_draw(draw, capacity: int, members: int) -> tuple[float, float]:
    """(compile seconds, best-of-3 seconds per draw of every member's minibatch)."""
    state = jax.vmap(lambda _: full_buffer(capacity))(jnp.arange(members))

    @jax.jit
    def run(state, key):
        def body(total, k):
            keys = jax.random.split(k, members)
            batch = jax.vmap(draw)(state, keys)
            return total + batch["reward"].sum() + batch["obs"].sum(), None
        total, _ = jax.lax.scan(body, jnp.zeros(()), jax.random.split(key, DRAWS))
        return total

    key = jax.random.key(0)
    start = time.perf_counter()
    run(state, key).block_until_ready()
    compile_s = time.perf_counter() - start
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run(state, key).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return compile_s, best / DRAWS


def main() -> None:
    members = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    capacities = [int(c) for c in sys.argv[2:]] or [10_000, 100_000, 1_000_000]
    device = jax.devices()[0]
    for capacity in capacities:
        for name, draw in (("uniform", draw_uniform), ("choice", draw_choice)):
            compile_s, per_draw = seconds_per_draw(draw, capacity, members)
            print(json.dumps({
                "method": name, "capacity": capacity, "members": members, "batch": BATCH,
                "ms_per_draw": round(per_draw * 1e3, 4), "compile_s": round(compile_s, 2),
                "device": f"{device.platform}:{device.device_kind}", "jax": jax.__version__,
            }), flush=True)


if __name__ == "__main__":
    main()
