"""Actor-Critic with Experience Replay (Wang et al., 2017), for discrete actions.

    for each train step:                                                      (train_step)
        roll the current policy pi for T steps in N envs; keep mu(.|s_t), the probabilities
        the actions were drawn from                                          (collect_segments)
        add the N segments of T steps to the segment replay (on device: whole segments, so
        every step keeps its own obs, action, reward, episode flags and mu, in one of the
        forms of `jaxrl.algos.acer.segments`)
        update on the N on-policy segments, then n times on replay_batch replayed ones, once
        replay_start segments are stored (n = replay_ratio, or ~ Poisson(replay_ratio) as in
        vel and baselines: replay_schedule)                       (update, replay_updates)
            rho(a) = pi(a|s) / mu(a|s);  c = min(1, rho(a_t))
            Q_ret = Retrace(r, Q(s, a), V(s'), c)                            (ops.retrace)
            g = min(c_bar, rho(a_t)) grad log pi(a_t|s) (Q_ret - V(s))
              + sum_a [1 - c_bar / rho(a)]_+ pi(a|s) grad log pi(a|s) (Q(s, a) - V(s))
              + ent_coef grad H(pi(.|s))                     (truncation with bias correction)
            trust region on the logits phi: g <- g - max(0, (k.g - delta) / |k|^2) k,
                k = grad_phi KL(pi_avg(.|s) || pi(.|s))                (ops.trust_region)
            descend q_coef * 0.5 (Q_ret - Q(s, a_t))^2 and ascend g, through one backward pass
            theta_avg <- avg_decay theta_avg + (1 - avg_decay) theta

``V(s) = sum_a pi(a|s) Q(s, a)``; a truncated step bootstraps from the value of its true final
observation and a terminated one does not (the segment keeps ``next_obs``). The optimizer is
Adam or, as in the paper and reading 002's runs, RMSProp (``optimizer``), clipped either way.
The config is `jaxrl.algos.acer.config`'s; the replay's segments `jaxrl.algos.acer.segments`'.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import chex
import jax
import jax.numpy as jnp
import optax
from flax import struct

from envs.spaces import Discrete
from envs.wrappers import completed_episode_summary
from jaxrl.algos import acting
from jaxrl.algos.acer.config import ACERConfig, ACERHparams, ACERStatic, default_config
from jaxrl.algos.acer.segments import Segment, from_replay, replay_example, to_replay
from jaxrl.algos.algorithm import standalone
from jaxrl.algos.offpolicy import frame_shape
from jaxrl.config import ConfigError
from jaxrl.ops import (
    categorical_kl_gradient,
    clipped_optimizer,
    polyak_update,
    project_kl,
    retrace,
)
from jaxrl.parts import diagnostics as diag
from jaxrl.parts import memory
from jaxrl.parts.buffers import uniform
from jaxrl.parts.q_networks import PolicyAndQ
from jaxrl.parts.rollout import EnvCarry, env_step, flatten_obs, obs_dim, reset_envs
from jaxrl.parts.torsos import resolve_torso

MU_FLOOR = 1e-8  # behaviour probabilities are softmax outputs (> 0); guard the division anyway
#: the replayed updates' diagnostics, reported as ``replay_<name>`` (their mean over the updates)
REPLAY_METRICS = ("q_loss", "rho_mean", "rho_truncated_fraction", "bias_correction_share",
                  "trust_region_active_fraction", "kl_from_average", "q_taken_mean", "v_mean")


@struct.dataclass
class ACERState:
    params: Any  # `PolicyAndQ` variables
    avg_params: Any  # their Polyak average (the trust region's reference policy)
    opt_state: Any
    buffer: uniform.ReplayState  # of `Segment` items
    carry: EnvCarry
    key: jax.Array
    update_step: jax.Array  # [] int32
    env_steps: jax.Array  # [] int32 per seed
    hparams: ACERHparams


def make_network(static: ACERStatic, env, env_params) -> PolicyAndQ:
    space = env.action_space(env_params)
    if not isinstance(space, Discrete):
        raise ConfigError(f"ACER here needs a discrete action space, got {space!r}")
    torso = resolve_torso(static.torso, env.observation_space(env_params).shape)
    return PolicyAndQ(space.n, tuple(static.hidden), static.activation, torso,
                      static.shared_network)


def optimizer(hp: ACERHparams, static: ACERStatic) -> optax.GradientTransformation:
    return clipped_optimizer(static.optimizer, hp, hp.learning_rate, static.rmsprop_style)


def init(key: jax.Array, env, env_params, config, hparams: ACERHparams | None = None
         ) -> ACERState:
    """Fresh networks, an empty segment replay and envs for one seed."""
    hp = config.hparams() if hparams is None else hparams
    static = config.static()
    net_key, env_key, state_key = jax.random.split(key, 3)
    dim, n = obs_dim(env.observation_space(env_params)), env.action_space(env_params).n
    params = make_network(static, env, env_params).init(net_key, jnp.zeros((1, dim)))
    item = replay_example(static.num_steps, dim, n, static, frame_shape(env, env_params, static))
    return ACERState(params=params, avg_params=params, opt_state=optimizer(hp, static).init(params),
                     buffer=uniform.init(item, static.buffer_segments),
                     carry=reset_envs(env_key, env, env_params, static.num_envs),
                     key=state_key, update_step=jnp.zeros((), jnp.int32),
                     env_steps=jnp.zeros((), jnp.int32), hparams=hp)


def collect_segments(state: ACERState, key, static: ACERStatic, env, env_params, network):
    """``(carry, segments [T, N], episode info [T, N])``: T steps of N envs with actions drawn
    from the current policy, each step with the probabilities it was drawn from."""

    def one_step(carry: EnvCarry, step_key):
        act_key, env_key = jax.random.split(step_key)
        logits, _ = network.apply(state.params, carry.obs)
        action = jax.random.categorical(act_key, logits).astype(jnp.int32)
        carry, step, info = env_step(env_key, env, env_params, carry, action)
        return carry, (Segment(step.obs, step.action, step.reward, step.terminated,
                               step.truncated, step.next_obs, jax.nn.softmax(logits)), info)

    carry, (segments, info) = jax.lax.scan(one_step, state.carry,
                                           jax.random.split(key, static.num_steps))
    return carry, segments, info


def take(x: jax.Array, action: jax.Array) -> jax.Array:
    """``x[..., action]``: ``[..., A]`` and ``[...]`` -> ``[...]``."""
    return jnp.take_along_axis(x, action[..., None], axis=-1)[..., 0]


@struct.dataclass
class Learner:
    params: Any
    avg_params: Any
    opt_state: Any


def update(learner: Learner, seg: Segment, hp: ACERHparams, static: ACERStatic, network
           ) -> tuple[Learner, dict]:
    """One ACER step on time-major segments (leaves ``[T, B, ...]``; see the module
    docstring). Returns the new learner and its diagnostics."""
    chex.assert_rank([seg.reward, seg.action, seg.terminated, seg.truncated], 2)
    chex.assert_equal_shape([seg.obs, seg.next_obs])
    chex.assert_equal_shape_prefix([seg.obs, seg.mu, seg.reward], 2)
    (logits, q), backward = jax.vjp(lambda p: network.apply(p, seg.obs), learner.params)
    next_logits, next_q = network.apply(learner.params, seg.next_obs)
    next_v = jnp.sum(jax.nn.softmax(next_logits) * next_q, axis=-1)
    avg_logits, _ = network.apply(learner.avg_params, seg.obs)
    pi = jax.nn.softmax(logits)
    v = jnp.sum(pi * q, axis=-1)
    rho_all = pi / jnp.maximum(seg.mu, MU_FLOOR)  # [T, B, A]
    rho = take(rho_all, seg.action)
    q_taken = take(q, seg.action)
    q_ret = retrace(seg.reward, q_taken, next_v, seg.terminated, seg.truncated,
                    jnp.minimum(1.0, rho), hp.gamma)
    advantage = q_ret - v
    correction = jax.nn.relu(1.0 - hp.c_bar / jnp.maximum(rho_all, MU_FLOOR)) * pi

    def objective(logits):
        """Summed over samples, so its gradient is every sample's own ``[T, B, A]``."""
        log_pi = jax.nn.log_softmax(logits)
        main = jnp.minimum(hp.c_bar, rho) * take(log_pi, seg.action) * advantage
        bias = jnp.sum(correction * log_pi * (q - v[..., None]), axis=-1)
        entropy = -jnp.sum(jax.nn.softmax(logits) * log_pi, axis=-1)
        return jnp.sum(main + bias + hp.ent_coef * entropy), (main, bias, entropy)

    g, (main, bias, entropy) = jax.grad(objective, has_aux=True)(logits)
    kl_grad = categorical_kl_gradient(logits, jax.nn.softmax(avg_logits))
    z, scale = project_kl(g, kl_grad, hp.delta) if static.trust_region else (g, jnp.zeros_like(v))
    count = seg.reward.size
    q_error = q_taken - q_ret
    # d/dq of q_coef * 0.5 * mean((Q_ret - Q(s, a))^2), and the ascent direction z on logits
    dq = hp.q_coef * q_error[..., None] * jax.nn.one_hot(seg.action, q.shape[-1]) / count
    (grads,) = backward((-z / count, dq))
    updates, opt_state = optimizer(hp, static).update(grads, learner.opt_state, learner.params)
    params = optax.apply_updates(learner.params, updates)
    avg_params = polyak_update(learner.avg_params, params, 1.0 - hp.avg_decay)
    avg_pi = jax.nn.softmax(avg_logits)
    metrics = {
        "q_loss": 0.5 * jnp.mean(jnp.square(q_error)), "entropy": entropy.mean(),
        "rho_mean": rho.mean(), "rho_truncated_fraction": jnp.mean(rho > hp.c_bar),
        "bias_correction_share": jnp.abs(bias).mean()
        / jnp.maximum(jnp.abs(main).mean() + jnp.abs(bias).mean(), 1e-12),
        "trust_region_active_fraction": jnp.mean(scale > 0),
        "kl_from_average": jnp.mean(jnp.sum(avg_pi * (jnp.log(jnp.maximum(avg_pi, MU_FLOOR))
                                                      - jax.nn.log_softmax(logits)), -1)),
        "q_taken_mean": q_taken.mean(), "v_mean": v.mean(), "q_ret_mean": q_ret.mean(),
        **diag.gradient_stats(grads, updates, static.verbosity)}
    return Learner(params, avg_params, opt_state), metrics


def replay_count(key: jax.Array, static: ACERStatic) -> jax.Array:
    """``[]`` int32: how many replayed updates follow this on-policy one (``replay_schedule``)."""
    if static.replay_schedule == "poisson":
        return jax.random.poisson(key, static.replay_ratio).astype(jnp.int32)
    return jnp.asarray(static.replay_ratio, jnp.int32)


def replay_updates(learner: Learner, buffer, count: jax.Array, key: jax.Array,
                   hp: ACERHparams, static: ACERStatic, network, shape) -> tuple[Learner, dict]:
    """``count`` updates (``[]`` int32, traced) on ``replay_batch`` segments each, sampled
    uniformly from ``buffer``. Returns the learner and the sum of each of `REPLAY_METRICS`
    over the updates (``[]`` each; 0 when ``count`` is 0)."""

    def one(i, carry):
        learner, sums = carry
        sampled, _, _ = uniform.sample(buffer, jax.random.fold_in(key, i), static.replay_batch)
        learner, m = update(learner, from_replay(sampled, static, shape), hp, static, network)
        return learner, {name: sums[name] + m[name] for name in REPLAY_METRICS}

    zeros = {name: jnp.zeros((), jnp.float32) for name in REPLAY_METRICS}
    return jax.lax.fori_loop(0, count, one, (learner, zeros))


def train_step(state: ACERState, static: ACERStatic, env, env_params):
    """One on-policy update and ``replay_ratio`` replayed ones on average (see the module
    docstring)."""
    network = make_network(static, env, env_params)
    shape = frame_shape(env, env_params, static)
    key, rollout_key, count_key, replay_key = jax.random.split(state.key, 4)
    carry, segments, info = collect_segments(state, rollout_key, static, env, env_params,
                                             network)
    items, mismatches = to_replay(segments, static, shape)
    buffer = uniform.add(state.buffer, items, state.update_step)
    learner = Learner(state.params, state.avg_params, state.opt_state)
    learner, metrics = update(learner, segments, state.hparams, static, network)
    ready = buffer.size >= static.replay_start
    count = jnp.where(ready, replay_count(count_key, static), 0)
    learner, sums = replay_updates(learner, buffer, count, replay_key, state.hparams, static,
                                   network, shape)
    for name in REPLAY_METRICS:
        metrics[f"replay_{name}"] = jnp.where(count > 0, sums[name] / jnp.maximum(count, 1),
                                              jnp.nan)
    metrics["replay_fraction"] = ready.astype(jnp.float32)  # 1 once replay has started
    metrics["replay_updates"] = count.astype(jnp.float32)
    metrics["buffer_fill"] = uniform.fill_fraction(buffer)
    if static.frame_replay:  # segments whose frames would not rebuild exactly: must stay 0
        metrics["frame_mismatches"] = mismatches.astype(jnp.float32)
    metrics.update(completed_episode_summary(info))
    metrics["env_steps"] = (state.env_steps + static.steps_per_update).astype(jnp.float32)
    state = dataclasses.replace(state, params=learner.params, avg_params=learner.avg_params,
                                opt_state=learner.opt_state, buffer=buffer, carry=carry,
                                key=key, update_step=state.update_step + 1,
                                env_steps=state.env_steps + static.steps_per_update)
    return state, metrics


# -- acting -------------------------------------------------------------------------------------
def make_policy(static: ACERStatic, env, env_params) -> acting.Policy:
    """Acting by the policy's most probable action ``[K]`` (a sample of it when not
    deterministic); its value ``V(s) = sum_a pi(a|s) Q(s, a)`` ``[K]``."""
    network = make_network(static, env, env_params)
    obs_space = env.observation_space(env_params)

    def heads(state, obs) -> tuple[jax.Array, jax.Array]:
        """``(policy logits, Q-values)``, each ``[K, A]``."""
        return cast(tuple[jax.Array, jax.Array],
                    network.apply(state.params, flatten_obs(obs, obs_space)))

    def mode(state, obs):
        return jnp.argmax(heads(state, obs)[0], axis=-1).astype(jnp.int32)

    def sample(state, obs, key):
        return jax.random.categorical(key, heads(state, obs)[0])

    def value(state, obs):
        logits, q = heads(state, obs)
        return jnp.sum(jax.nn.softmax(logits) * q, axis=-1)

    return acting.feed_forward(mode, sample, value, env.action_space(env_params))


# -- memory model -------------------------------------------------------------------------------
def memory_model(config: ACERStatic, state: ACERState, obs_bytes: int,
                 action_bytes: int) -> memory.Footprint:
    """Replay is ``state.buffer`` (segments); the working set of a train step: the rollout
    ``[T, N]`` and a replayed batch ``[T, K]``, each as stored items and as float obs and next
    obs, three forward passes (online on obs and next obs, average on obs) and the backward
    pass over the larger batch, and ``memory.LEARNER_TEMPORARIES`` copies of the learner
    (params, average, optimizer)."""
    replay = memory.tree_bytes(state.buffer)
    learner = memory.tree_bytes((state.params, state.avg_params, state.opt_state))
    units = memory.activation_units(state.params, config)
    samples = config.num_steps * max(config.num_envs, config.replay_batch)
    item = -(-replay // max(1, config.buffer_segments))
    floats = config.num_steps * 2 * obs_bytes
    data = (item + floats) * (config.num_envs + config.replay_batch)
    activations = samples * units * 4 * (3 + memory.ACTIVATION_STORE)
    work = data + activations + memory.LEARNER_TEMPORARIES * learner
    return memory.Footprint(replay_bytes=replay, working_bytes=work)


ALGORITHM = standalone("acer", ACERConfig, default_config, init, train_step, make_policy,
                       memory_model, ("discrete",))
