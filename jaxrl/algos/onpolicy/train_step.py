"""The shared on-policy train step (`make_train_step`): rollout, batch, update, bookkeeping."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from envs.spaces import Discrete
from envs.wrappers import completed_episode_summary
from jaxrl.algos.obs_normalization import update_obs_stats
from jaxrl.algos.onpolicy.batch import adapt_value_head, make_batch
from jaxrl.algos.onpolicy.collect import rollout, scale_rewards, update_reward_scaler
from jaxrl.algos.onpolicy.config import OnPolicyStatic
from jaxrl.algos.onpolicy.state import OnPolicyState, Updated, make_network, policy_log_std
from jaxrl.parts import diagnostics as diag


def rollout_metrics(state, traj, values, targets, advantages, rewards, entropy,
                    static: OnPolicyStatic, env, env_params, params) -> dict:
    """Episode stats, entropy relative to its maximum / log-std, residual variance, and (debug)
    value / target / advantage / reward distributions."""
    m = completed_episode_summary(traj.info)
    space = env.action_space(env_params)
    if isinstance(space, Discrete):
        m["entropy_relative"] = entropy / jnp.log(space.n) if space.n > 1 else jnp.float32(0.0)
    else:
        m["log_std_mean"] = jnp.mean(policy_log_std(params))
    m["residual_variance"] = diag.residual_variance(values, targets)
    m["env_steps"] = (state.env_steps + static.steps_per_update).astype(jnp.float32)
    if diag.level_at_least(static.verbosity, "debug"):
        for name, x in (("value", values), ("value_target", targets), ("advantage", advantages),
                        ("reward", traj.reward), ("reward_scaled", rewards)):
            m.update(diag.describe(x, name))
    return m


def advance(state: OnPolicyState, traj, carry, memory, updated: Updated, key, reward_scaler,
            static: OnPolicyStatic) -> OnPolicyState:
    """The state after an update: new params, envs, memory, statistics and counters."""
    obs_stats = update_obs_stats(state.obs_stats, traj.obs) if static.normalize_obs else (
        state.obs_stats)
    return dataclasses.replace(
        state,
        params=updated.params, opt_state=updated.opt_state, obs_stats=obs_stats,
        reward_scaler=reward_scaler,
        carry=carry, memory=memory, key=key, update_step=state.update_step + 1,
        env_steps=state.env_steps + static.steps_per_update,
    )


def make_train_step(update, relabel=None):
    """``train_step(state, static, env, env_params) -> (state, metrics)`` for an algorithm
    whose update rule is ``update(state, batch, key, static, network) -> Updated``::

        collect T steps from N envs with pi_old
        relabel the rewards (if the algorithm learns its reward, e.g. GAIL)
        scale rewards; A = GAE(lambda) bootstrapped through truncation; targets = A + V_old
        PopArt (if configured): move the target statistics, rescale the value head
        params <- update(...)
        update the observation statistics and counters

    ``relabel(state, traj, key, static, env, env_params) -> (state, traj, metrics)`` may train
    a reward model on the rollout and return it with the rewards it gives; the episode
    statistics (``traj.info``) keep the env's true returns.
    """

    def train_step(state: OnPolicyState, static: OnPolicyStatic, env, env_params):
        network = make_network(static, env, env_params)
        key, rollout_key, update_key = jax.random.split(state.key, 3)
        carry, memory, traj = rollout(state, rollout_key, static, env, env_params, network)
        relabel_metrics = {}
        if relabel is not None:
            state, traj, relabel_metrics = relabel(state, traj, jax.random.fold_in(update_key, 1),
                                                   static, env, env_params)
        reward_scaler = update_reward_scaler(state, traj, static)
        rewards = scale_rewards(reward_scaler, traj.reward, static)
        batch = make_batch(state, traj, rewards, static, network)
        state, batch, popart_metrics = adapt_value_head(state, batch, static)
        updated = update(state, batch, update_key, static, network)
        with jax.named_scope("diagnostics"):
            diagnostics = rollout_metrics(state, traj, batch.value, batch.target,
                                          batch.advantage, rewards, updated.metrics["entropy"],
                                          static, env, env_params, updated.params)
        metrics = {**updated.metrics, **popart_metrics, **relabel_metrics, **diagnostics}
        new_state = advance(state, traj, carry, memory, updated, key, reward_scaler, static)
        return new_state, metrics

    return train_step
