"""Storing into and sampling from the device replay buffer: n-step windows, frame replay,
hindsight goals and prioritized sampling with its importance weights."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from envs.goals import goal_env
from jaxrl.algos.offpolicy.config import OffPolicyHparams, OffPolicyStatic
from jaxrl.algos.offpolicy.state import OffPolicyState, buffer_module, unflatten
from jaxrl.config import ConfigError
from jaxrl.ops import linear_schedule
from jaxrl.parts.buffers import frames, her, nstep, prioritized, uniform
from jaxrl.parts.transition import Transition


def beta_schedule(state: OffPolicyState) -> jax.Array:
    """``[]`` importance-weight exponent, linear from ``per_beta`` to 1 over the run."""
    hp = state.hparams
    return linear_schedule(hp.per_beta, 1.0, state.env_steps, hp.total_steps)


def store(state: OffPolicyState, row: Transition, static: OffPolicyStatic):
    """Push a row through the n-step window and add what it emits to the buffer. Until the
    window is full the write is made but not counted (position and size stay), so the next
    write overwrites it and garbage is never sampled. With ``frame_replay`` the row's
    observations go to the frame store and the item keeps references to them. Returns
    ``(buffer, window, frame store, [] int32 frame mismatches)``."""
    if not static.bootstrap_truncation:
        row = dataclasses.replace(row, terminated=row.terminated | row.truncated,
                                  truncated=jnp.zeros_like(row.truncated))
    window, item, valid = nstep.push(state.window, row, state.hparams.gamma)
    store, mismatches = state.frames, jnp.zeros((), jnp.int32)
    if store is not None:
        shape = store.last.shape[1:]
        store, mismatches = frames.push(store, row.obs.reshape(row.obs.shape[0], *shape))
        item = frames.encode(store, unflatten(item, shape), static.n_step)
    buffer = buffer_module(static).add(state.buffer, item, state.update_step, valid)
    return buffer, window, store, mismatches


def sample(state: OffPolicyState, key, static: OffPolicyStatic, env, env_params):
    """``(batch, indices, importance weights)``; weights are 1 for uniform replay. With
    ``frame_replay`` the batch's observations are rebuilt from the frame store (flat again);
    with ``her`` a share of the batch gets hindsight goals (`jaxrl.parts.buffers.her`)."""
    if static.her == "none":
        return _sample(state, key, static)
    sample_key, her_key = jax.random.split(key)
    batch, indices, weights = _sample(state, sample_key, static)
    goals = goal_env(env)
    if goals is None:
        raise ConfigError(f"her={static.her!r} needs a goal env (goal:BitFlip, "
                          f"goal:PointReach); {env.name} has no goals")
    assert isinstance(state.buffer, uniform.ReplayState)  # validate(): no prioritized
    batch = her.relabel(state.buffer, batch, indices, her_key, goals, env_params,
                        goals.goal_layout(env_params), static.her, static.her_k,
                        state.hparams.gamma, static.num_envs, goals.step_limit(env_params))
    return batch, indices, weights


def _sample(state: OffPolicyState, key, static: OffPolicyStatic):
    """The replay's own sample, observations flat (rebuilt from the frame store if there is
    one)."""
    batch, indices, weights = buffer_module(static).sample(
        state.buffer, key, static.batch_size, beta_schedule(state))
    if state.frames is not None:
        batch = frames.decode(state.frames, batch)
        flat = lambda x: x.reshape(x.shape[0], -1)
        batch = dataclasses.replace(batch, obs=flat(batch.obs), next_obs=flat(batch.next_obs))
    return batch, indices, weights


def reprioritize(buffer, indices, td_error, learning, hp: OffPolicyHparams,
                 static: OffPolicyStatic):
    """New priorities from |TD| where the step learned; unchanged (written back) otherwise."""
    if not static.prioritized:
        return buffer
    current = prioritized.priorities(buffer)[indices]
    new = prioritized.priority_of(td_error, hp.per_alpha)
    return prioritized.set_priorities(buffer, indices, jnp.where(learning, new, current))


def keep_if(learning, new, old):
    """``new`` where the step learned, else ``old`` (leafwise; both pytrees alike)."""
    return jax.tree.map(lambda a, b: jnp.where(learning, a, b), new, old)
