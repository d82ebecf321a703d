"""The shared off-policy train step (`make_train_step`): act, store, sample, learn."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from envs.spaces import Box, Discrete
from envs.wrappers import completed_episode_summary
from jaxrl.algos.obs_normalization import update_obs_stats
from jaxrl.algos.offpolicy.config import OffPolicyStatic, warmup_rounds
from jaxrl.algos.offpolicy.replay import keep_if, reprioritize, sample, store
from jaxrl.algos.offpolicy.state import OffPolicyState, buffer_module
from jaxrl.ops import noise, uniform_choice
from jaxrl.ops.lockstep import any_member
from jaxrl.ops.metric_sums import sum_scan, zero_metrics
from jaxrl.parts.rollout import env_step


def random_action(key, space, num_envs: int, obs: jax.Array) -> jax.Array:
    """Uniform random agent actions ``[N, ...]`` at flat observations ``obs [N, obs_dim]``
    (Box actions in the agent's ``[-1, 1]``; discrete ones among those a mask allows)."""
    if isinstance(space, Discrete):
        return uniform_choice(key, space.n, (num_envs,), space.allowed(obs))
    if isinstance(space, Box):
        return jax.random.uniform(key, (num_envs, *space.shape), jnp.float32, -1.0, 1.0)
    raise TypeError(f"unsupported action space {space!r}")


def learn_round(learn_once, state: OffPolicyState, learning: jax.Array, keys: jax.Array):
    """The round's gradient steps (one per key of ``keys [G, 2]``), chained by
    ``learn_once((state, learning), key) -> ((state, learning), metrics)``: the last state, and
    each metric's mean over the G steps, as float32. A round in which no member learns
    (``learning`` false for all: the warm-up) runs no step and reports zeros.

    The metrics are summed in the loop's carry as one vector (`jaxrl.ops.metric_sums`): stacked
    as the scan's outputs, each cost an in-place update kernel every gradient step (18 of the
    100 kernels a step of SAC's GPU program, experiments/gpu_hlo.py)."""
    zeros, unravel = zero_metrics(lambda: learn_once((state, learning), keys[0])[1])

    def chain(state):
        (learned, _), sums = sum_scan(learn_once, (state, learning), keys, zeros)
        return learned, sums / keys.shape[0]

    # a round where every member is still warming up throws its chain away (`keep_if`), so it
    # is not run: rejax skips its fill's gradient steps so, half of the GPU plan's SAC rung
    learned, means = jax.lax.cond(any_member(learning), chain, lambda s: (s, zeros), state)
    return learned, unravel(means)


def make_train_step(explore, learn):
    """``train_step(state, static, env, env_params) -> (state, metrics)``: ``log_interval``
    rounds of acting, storing and learning (see the module docstring)."""

    def train_step(state: OffPolicyState, static: OffPolicyStatic, env, env_params):
        space = env.action_space(env_params)
        warmup = warmup_rounds(static)

        def learn_once(carry, key):
            state, learning = carry
            sample_key, learn_key = jax.random.split(key)
            with jax.named_scope("replay"):
                batch, indices, weights = sample(state, sample_key, static, env, env_params)
            out = learn(state, batch, weights, learn_key, static, space)
            with jax.named_scope("replay"):
                buffer = reprioritize(state.buffer, indices, out.td_error, learning,
                                      state.hparams, static)
                staleness = buffer_module(static).staleness(state.buffer, indices,
                                                            state.update_step)
            metrics = {**out.metrics, "sample_staleness": staleness.astype(jnp.float32).mean()}
            if static.prioritized:
                metrics["importance_weight_mean"] = weights.mean()
            state = dataclasses.replace(state, params=out.params, target_params=out.target_params,
                                        opt_state=out.opt_state, buffer=buffer,
                                        update_step=state.update_step + learning)
            return (state, learning), metrics

        def one_round(state: OffPolicyState, _):
            key, act_key, random_key, env_key, learn_key = jax.random.split(state.key, 5)
            warming = state.rounds < warmup
            if state.noise is not None:  # the OU processes step on, every round
                act_key, step_key, reset_key = jax.random.split(act_key, 3)
                hp: Any = state.hparams  # DDPG's or SAC's: they have ou_theta and ou_dt
                rho = noise.ou_correlation(hp.ou_theta, hp.ou_dt)
                state = dataclasses.replace(state, noise=noise.ou_step(state.noise, step_key, rho))
            with jax.named_scope("act"):
                action = jnp.where(warming, random_action(random_key, space, static.num_envs,
                                                          state.carry.obs),
                                   explore(state, state.carry.obs, act_key, static, space))
            carry, row, info = env_step(env_key, env, env_params, state.carry, action)
            if state.noise is not None:  # an ended episode's process restarts afresh
                state = dataclasses.replace(state, noise=noise.ou_reset(
                    state.noise, reset_key, row.terminated | row.truncated))
            with jax.named_scope("replay"):
                buffer, window, frame_store, mismatches = store(state, row, static)
            state = dataclasses.replace(state, buffer=buffer, window=window, carry=carry,
                                        frames=frame_store,
                                        obs_stats=update_obs_stats(state.obs_stats, row.obs),
                                        key=key, rounds=state.rounds + 1,
                                        env_steps=state.env_steps + static.num_envs)
            learning = ~warming
            learned, metrics = learn_round(learn_once, state, learning,
                                           jax.random.split(learn_key, static.gradient_steps))
            # ``learning`` is one flag for the whole round, so the steps chain their updates
            # and the round keeps or drops them once: a select per step costs one kernel per
            # parameter leaf (10% of SAC hopper's run at one member,
            # benchmarks/sac-ablation-cpu). A warming round's chain is thrown away whole.
            kept = keep_if(learning, (learned.params, learned.target_params, learned.opt_state),
                           (state.params, state.target_params, state.opt_state))
            state = dataclasses.replace(learned, params=kept[0], target_params=kept[1],
                                        opt_state=kept[2])
            return state, (metrics, info, learning, mismatches)

        state, (metrics, info, learning, mismatches) = jax.lax.scan(one_round, state, None,
                                                                    static.log_interval)
        weight = learning.astype(jnp.float32)
        count = jnp.maximum(weight.sum(), 1.0)
        # where, not a product: a warming round's discarded chain may leave a non-finite metric
        out = {k: jnp.sum(jnp.where(learning, v, 0.0)) / count for k, v in metrics.items()}
        out.update(completed_episode_summary(info))
        out["learning_fraction"] = weight.mean()
        out["buffer_fill"] = buffer_module(static).fill_fraction(state.buffer)
        if static.frame_replay:  # stacks the frame store could not rebuild: must stay 0
            out["frame_mismatches"] = mismatches.sum().astype(jnp.float32)
        out["env_steps"] = state.env_steps.astype(jnp.float32)
        out["gradient_updates"] = state.update_step.astype(jnp.float32)
        return state, out

    return train_step
