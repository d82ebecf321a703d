"""The one schema of an env step: ``(obs, action, reward, terminated, truncated, next_obs)``.

Both families record a step the same way, so it has one home here:

* `jaxrl.parts.rollout.env_step` returns a `Transition` of ``N`` envs (every algorithm steps its envs
  through it);
* on-policy rollouts keep it, plus what the acting policy and the episode-statistics wrapper
  add, as `jaxrl.parts.rollout.RolloutStep` (a `Transition` subclass with ``log_prob`` and ``info``),
  stacked time-major ``[T, N, ...]`` by `jaxrl.parts.rollout.collect`;
* off-policy training pushes it unchanged into the n-step window (`jaxrl.parts.buffers.nstep.push`).

Records that mean something else stay distinct and say how they relate: the n-step window
emits `jaxrl.parts.buffers.nstep.NStepTransition`, the aggregate of up to ``n`` consecutive
`Transition`\\ s (discounted reward sum and the ``discount`` of ``V(next_obs)``; no
``truncated``, which the discount already accounts for), and that is what replay stores.

``terminated`` (absorbing state: do not bootstrap) and ``truncated`` (time limit: bootstrap from
``next_obs``) are kept apart, and ``next_obs`` is the *true* next observation (the env's
``info["final_observation"]`` on a done step, never the reset observation).
"""

from __future__ import annotations

import jax
from flax import struct

__all__ = ["Transition"]


@struct.dataclass
class Transition:
    """One step of ``N`` envs (leaves ``[N, ...]``; stacked records add leading axes).

    obs: ``[N, obs_dim]`` the (raw, flattened) observation the action was chosen from.
    action: ``[N]`` int32 or ``[N, act_dim]`` float32 agent action (normalized space).
    reward: ``[N]`` float reward r_t.
    terminated: ``[N]`` bool, an absorbing state was reached.
    truncated: ``[N]`` bool, a time limit cut the episode.
    next_obs: ``[N, obs_dim]`` true next observation s_{t+1} (the final one on done steps).
    """

    obs: jax.Array
    action: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    next_obs: jax.Array
