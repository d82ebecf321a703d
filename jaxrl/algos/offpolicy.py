"""Machinery shared by the off-policy algorithms (DQN, DDPG, TD3, SAC).

An off-policy algorithm is its config (static fields on an `OffPolicyStatic` subclass, traced
ones on an `OffPolicyHparams` subclass), its networks, an exploration rule and a learning step:

* ``init_learner(key, obs_dim, action_space, static, hp) -> (params, target_params, opt_state)``
* ``explore(state, obs [N, obs_dim], key, static, action_space) -> action [N, ...]``
* ``learn(state, batch, weights, key, static, action_space) -> Learned``

Traced values are read from ``state.hparams`` only, static ones from the static view
``static``. Acting outside training reuses ``explore``: ``make_act =
make_act_from(make_agent_action, explore)``. DDPG, TD3 and SAC share their networks, critics
and acting parts here (`ActorCriticGroups`, `actor_critic_networks`, `critic_values_min`,
`acting_parts`).

Everything else lives here once (`make_train_step`)::

    for each train step (log_interval rounds; metrics averaged over the rounds that learned):
        a_t = explore(s_t)                      (uniform random actions while warming up)
        step N envs; push the step's `Transition` (s_t, a_t, r_t, terminated_t,
        truncated_t, s_{t+1}) into the n-step window; add the n-step transition it emits
        to the replay buffer (on device)
        once env_steps >= learning_starts, gradient_steps times:
            sample a batch (uniform or prioritized), learn, update priorities

Stored transitions keep the *true* next observation (the final one on a truncated step), so
a time limit bootstraps; ``bootstrap_truncation=False`` is the classic bug kept as a switch.
Transitions are `jaxrl.buffers.nstep.NStepTransition`: ``(obs, action, reward, discount,
terminated, next_obs, steps)`` with the learner's target ``reward + discount * V(next_obs)``.
With ``frame_replay`` (stacked image observations, Atari's) the buffer's items point into a
`jaxrl.buffers.frames.FrameStore` that keeps every frame once as uint8, and a sampled batch's
stacks are rebuilt exactly before the learner sees them.

Length: the shared train step of four algorithms and the actor-critic parts three of them
share; each is a short function, kept together so the contract above reads in one place (the
actor-critic section at the end could become its own module).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from envs.goals import goal_env
from envs.spaces import Box, Discrete
from envs.wrappers import completed_episode_summary
from jaxrl import diagnostics as diag
from jaxrl import memory
from jaxrl.algos import acting
from jaxrl.buffers import frames, her, nstep, prioritized, uniform
from jaxrl.config import ConfigError, Hparams, StaticConfig, static, traced
from jaxrl.networks import Critic, check_network_fields
from jaxrl.ops import linear_schedule, noise
from jaxrl.rollout import EnvCarry, env_step, flatten_obs, obs_dim, reset_envs
from jaxrl.transition import Transition


@dataclasses.dataclass(frozen=True)
class OffPolicyStatic(StaticConfig):
    """Static fields every off-policy algorithm has."""

    num_envs: int = static(1, "parallel envs per seed")
    buffer_size: int = static(100_000, "replay capacity per seed (transitions)")
    batch_size: int = static(256)
    learning_starts: int = static(1_000, "env steps of uniform random actions before learning")
    gradient_steps: int = static(1, "updates per env-step round (UTD ratio = this / num_envs)")
    log_interval: int = static(50, "env-step rounds per train step (metrics averaged)")
    n_step: int = static(1, "n of the n-step return")
    prioritized: bool = static(False, "proportional prioritized replay")
    frame_replay: bool = static(False, "replay stacked [H, W, S] image observations in [0, 1] "
                                "(Atari's) as uint8 frames kept once: 1/16 of the memory")
    hidden: tuple[int, ...] = static((256, 256), "MLP widths")
    torso: str = static("auto", "auto | mlp | minatar_cnn | nature_cnn | nature_cnn_small"
                        " (auto: by observation shape, resolved by the driver; a conv torso"
                        " replaces hidden)")
    activation: str = static("relu")
    bootstrap_truncation: bool = static(True, "False treats time limits as termination (wrong)")
    her: str = static("none", "hindsight relabelling of replayed goals (goal envs): none | "
                      "future | final")
    her_k: int = static(4, "HER relabels per real transition: a 1 - 1/(1 + k) share of "
                        "sampled transitions gets a hindsight goal")
    verbosity: str = static("basic", "diagnostics level: basic | debug | full")

    @property
    def steps_per_update(self) -> int:
        """Env steps per seed in one train step (what the driver counts as an 'update')."""
        return self.num_envs * self.log_interval

    def validate(self) -> None:
        if self.num_envs > self.buffer_size:
            raise ConfigError(f"buffer_size ({self.buffer_size}) must be >= num_envs")
        check_network_fields(self.activation, self.torso, self.verbosity, diag.LEVELS)
        if self.her not in her.STRATEGIES:
            raise ConfigError(f"her must be one of {her.STRATEGIES}, got {self.her!r}")
        if self.her != "none" and (self.n_step != 1 or self.prioritized or self.frame_replay
                                   or not self.bootstrap_truncation):
            raise ConfigError("her relabels one-step transitions of uniform replay: it needs "
                              "n_step=1, prioritized=False, frame_replay=False and "
                              "bootstrap_truncation=True")


@struct.dataclass(frozen=True)
class OffPolicyHparams(Hparams):
    """Traced hyperparameters every off-policy algorithm has."""

    gamma: float = traced(0.99)
    max_grad_norm: float = traced(10.0, "global-norm gradient clipping")
    adam_eps: float = traced(1e-8)
    per_alpha: float = traced(0.6, "priority exponent")
    per_beta: float = traced(0.4, "importance-weight exponent at the start (annealed to 1)")
    total_steps: float = traced(0.0, "env steps per seed (set by train; anneal horizon)")


#: ``action_noise`` values of the continuous-action learners (DDPG, TD3, SAC)
ACTION_NOISES = ("white", "ou")


def correlated_noise(static) -> bool:
    """Whether exploration draws its noise from the state's OU processes (``action_noise="ou"``,
    `jaxrl.ops.noise`) rather than independently each step."""
    return getattr(static, "action_noise", "white") == "ou"


def check_action_noise(value: str) -> None:
    if value not in ACTION_NOISES:
        raise ConfigError(f"action_noise must be one of {ACTION_NOISES}, got {value!r}")


def warmup_rounds(static: OffPolicyStatic) -> int:
    """Env-step rounds of random actions: enough for the n-step window and one batch."""
    return max(-(-static.learning_starts // static.num_envs), static.n_step)


@struct.dataclass
class OffPolicyState:
    params: Any  # the learner's networks (`ActorCriticGroups`, or DQN's Q-network variables)
    target_params: Any  # alike
    opt_state: Any  # alike: one optimizer state per trained group
    buffer: uniform.ReplayState | prioritized.PrioritizedState
    window: nstep.NStepWindow
    frames: frames.FrameStore | None  # with frame_replay: the frames the buffer's items point to
    carry: EnvCarry
    key: jax.Array
    rounds: jax.Array  # [] int32 env-step rounds so far
    update_step: jax.Array  # [] int32 gradient updates so far
    env_steps: jax.Array  # [] int32 per seed
    hparams: OffPolicyHparams  # the algorithm's subclass of it, float32 scalars
    # [N, action_dim] float32 Ornstein-Uhlenbeck exploration noise (`jaxrl.ops.noise`) where
    # the config's ``action_noise`` is "ou" (DDPG, TD3, SAC); None otherwise
    noise: jax.Array | None = None


@struct.dataclass
class Learned:
    """What one learning step returns."""

    params: Any
    target_params: Any
    opt_state: Any
    td_error: jax.Array  # [B] for priorities
    metrics: dict


def check_transitions(batch, weights: jax.Array) -> None:
    """The shape contract at a loss's input (checked at trace time): every leaf of the sampled
    batch ``[B, ...]``, next observations shaped like observations, rewards, discounts and
    importance weights ``[B]``."""
    per_sample = [batch.reward, batch.discount, weights]
    chex.assert_rank(per_sample, 1)
    chex.assert_equal_shape(per_sample)
    chex.assert_equal_shape([batch.obs, batch.next_obs])
    chex.assert_equal_shape_prefix([*jax.tree.leaves(batch), weights], 1)


def buffer_module(static: OffPolicyStatic):
    """The replay module (`jaxrl.buffers.uniform` or `.prioritized`); both follow one buffer
    protocol (``init``, ``add``, ``sample`` with importance weights, ``staleness``,
    ``fill_fraction``), so only the priority updates branch on ``static.prioritized``."""
    return prioritized if static.prioritized else uniform


def frame_shape(env, env_params, static: Any) -> tuple[int, int, int] | None:
    """``(H, W, S)`` of the observations when ``static.frame_replay`` is on (None when off);
    the off-policy algorithms' and ACER's."""
    if not static.frame_replay:
        return None
    shape = tuple(env.observation_space(env_params).shape)
    if len(shape) != 3:
        raise ConfigError(f"frame_replay needs stacked image observations [H, W, S], got shape "
                          f"{shape}")
    return shape


def example_row(env, env_params, static: OffPolicyStatic) -> Transition:
    space = env.action_space(env_params)
    n, d = static.num_envs, obs_dim(env.observation_space(env_params))
    if isinstance(space, Discrete):
        action = jnp.zeros((n,), jnp.int32)
    else:
        action = jnp.zeros((n, *space.shape), jnp.float32)
    obs = jnp.zeros((n, d), jnp.float32)
    flag = jnp.zeros((n,), bool)
    return Transition(obs, action, jnp.zeros((n,), jnp.float32), flag, flag, obs)


def make_init(init_learner):
    """``init(key, env, env_params, config, hparams=None) -> OffPolicyState`` for an algorithm
    whose ``init_learner(key, obs_dim, action_space, static, hp) -> (params, target_params,
    opt_state)``."""

    def init(key: jax.Array, env, env_params, config, hparams: OffPolicyHparams | None = None
             ) -> OffPolicyState:
        """Fresh learner, replay buffer and envs for one seed. ``config``: a whole config (its
        traced values go into ``state.hparams``), or a static view given with ``hparams``."""
        hp = config.hparams() if hparams is None else hparams
        static = config.static()
        learner_key, env_key, state_key = jax.random.split(key, 3)
        row = example_row(env, env_params, static)
        params, target_params, opt_state = init_learner(
            learner_key, obs_dim(env.observation_space(env_params)),
            env.action_space(env_params), static, hp)
        items = nstep.emit(jax.tree.map(lambda x: x[None], row), 1.0)
        shape = frame_shape(env, env_params, static)
        store = None
        if shape is not None:
            store = frames.init(shape, static.num_envs, frames.ring_rounds(
                static.buffer_size, static.num_envs, static.n_step, shape[-1]))
            items = frames.encode(store, unflatten(items, shape), static.n_step)
        one_item = jax.tree.map(lambda x: x[0], items)
        ou = None
        if correlated_noise(static):
            state_key, noise_key = jax.random.split(state_key)
            dim = action_dim(env.action_space(env_params))
            ou = noise.ou_init(noise_key, (static.num_envs, dim))
        return OffPolicyState(
            params=params, target_params=target_params, opt_state=opt_state,
            buffer=buffer_module(static).init(one_item, static.buffer_size),
            window=nstep.window_init(row, static.n_step), frames=store,
            carry=reset_envs(env_key, env, env_params, static.num_envs),
            key=state_key, rounds=jnp.zeros((), jnp.int32), update_step=jnp.zeros((), jnp.int32),
            env_steps=jnp.zeros((), jnp.int32), hparams=hp, noise=ou,
        )

    return init


def random_action(key, space, num_envs: int) -> jax.Array:
    """Uniform random agent actions ``[N, ...]`` (Box actions in the agent's ``[-1, 1]``)."""
    if isinstance(space, Discrete):
        return jax.random.randint(key, (num_envs,), 0, space.n, dtype=jnp.int32)
    if isinstance(space, Box):
        return jax.random.uniform(key, (num_envs, *space.shape), jnp.float32, -1.0, 1.0)
    raise TypeError(f"unsupported action space {space!r}")


def beta_schedule(state: OffPolicyState) -> jax.Array:
    """``[]`` importance-weight exponent, linear from ``per_beta`` to 1 over the run."""
    hp = state.hparams
    return linear_schedule(hp.per_beta, 1.0, state.env_steps, hp.total_steps)


def unflatten(item: nstep.NStepTransition, shape: tuple[int, ...]) -> nstep.NStepTransition:
    """``obs`` and ``next_obs`` ``[K, obs_dim] -> [K, *shape]``."""
    view = lambda x: x.reshape(x.shape[0], *shape)
    return dataclasses.replace(item, obs=view(item.obs), next_obs=view(item.next_obs))


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
    with ``her`` a share of the batch gets hindsight goals (`jaxrl.buffers.her`)."""
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


def make_train_step(explore, learn):
    """``train_step(state, static, env, env_params) -> (state, metrics)``: ``log_interval``
    rounds of acting, storing and learning (see the module docstring)."""

    def train_step(state: OffPolicyState, static: OffPolicyStatic, env, env_params):
        space = env.action_space(env_params)
        warmup = warmup_rounds(static)

        def learn_once(carry, key):
            state, learning = carry
            sample_key, learn_key = jax.random.split(key)
            batch, indices, weights = sample(state, sample_key, static, env, env_params)
            out = learn(state, batch, weights, learn_key, static, space)
            kept = keep_if(learning, (out.params, out.target_params, out.opt_state),
                           (state.params, state.target_params, state.opt_state))
            buffer = reprioritize(state.buffer, indices, out.td_error, learning,
                                  state.hparams, static)
            staleness = buffer_module(static).staleness(state.buffer, indices,
                                                        state.update_step)
            metrics = {**out.metrics, "sample_staleness": staleness.astype(jnp.float32).mean()}
            if static.prioritized:
                metrics["importance_weight_mean"] = weights.mean()
            state = dataclasses.replace(state, params=kept[0], target_params=kept[1],
                                        opt_state=kept[2], buffer=buffer,
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
            action = jnp.where(warming, random_action(random_key, space, static.num_envs),
                               explore(state, state.carry.obs, act_key, static, space))
            carry, row, info = env_step(env_key, env, env_params, state.carry, action)
            if state.noise is not None:  # an ended episode's process restarts afresh
                state = dataclasses.replace(state, noise=noise.ou_reset(
                    state.noise, reset_key, row.terminated | row.truncated))
            buffer, window, frame_store, mismatches = store(state, row, static)
            state = dataclasses.replace(state, buffer=buffer, window=window, carry=carry,
                                        frames=frame_store,
                                        key=key, rounds=state.rounds + 1,
                                        env_steps=state.env_steps + static.num_envs)
            learning = ~warming
            (state, _), metrics = jax.lax.scan(
                learn_once, (state, learning), jax.random.split(learn_key, static.gradient_steps))
            metrics = jax.tree.map(jnp.mean, metrics)
            return state, (metrics, info, learning, mismatches)

        state, (metrics, info, learning, mismatches) = jax.lax.scan(one_round, state, None,
                                                                    static.log_interval)
        weight = learning.astype(jnp.float32)
        count = jnp.maximum(weight.sum(), 1.0)
        out = {k: jnp.sum(v * weight) / count for k, v in metrics.items()}
        out.update(completed_episode_summary(info))
        out["learning_fraction"] = weight.mean()
        out["buffer_fill"] = buffer_module(static).fill_fraction(state.buffer)
        if static.frame_replay:  # stacks the frame store could not rebuild: must stay 0
            out["frame_mismatches"] = mismatches.sum().astype(jnp.float32)
        out["env_steps"] = state.env_steps.astype(jnp.float32)
        out["gradient_updates"] = state.update_step.astype(jnp.float32)
        return state, out

    return train_step


# -- memory model -------------------------------------------------------------------------------
def memory_model(config: OffPolicyStatic, state: OffPolicyState, obs_bytes: int,
                 action_bytes: int) -> memory.Footprint:
    """The off-policy family's memory model (`jaxrl.memory`). Replay is ``state.buffer``
    (transitions, write steps, the sum tree when prioritized) and, with ``frame_replay``, the
    frame store its items point to. The working set of one train
    step (``log_interval`` rounds of acting, ``gradient_steps`` learning steps; only metrics
    are stacked): the sampled batch of ``batch_size`` items with indices, importance weights,
    targets and TD errors (and the ``[K, K]`` duplicate-index mask when prioritized); gradient
    activations of ``memory.OFF_POLICY_PASSES`` passes over all networks on it; one env round
    (``num_envs`` rows through the n-step window into the buffer); and
    ``memory.LEARNER_TEMPORARIES`` copies of the learner (params, targets, optimizer states:
    the learn / keep-if-learning selects copy all three). ``state`` may be abstract.
    """
    stored = memory.tree_bytes(state.buffer)
    replay = stored + memory.tree_bytes(state.frames)
    learner = memory.tree_bytes((state.params, state.target_params, state.opt_state))
    units = memory.activation_units(state.params, config)
    k, n = config.batch_size, config.num_envs
    item = -(-stored // max(1, config.buffer_size))
    sampled = k * (item + 4 * 4) + (k * k * 4 if config.prioritized else 0)
    if config.frame_replay:  # the batch's stacks, rebuilt (uint8) and as floats
        sampled += k * 2 * (obs_bytes + obs_bytes // 4)
    backward = memory.OFF_POLICY_PASSES * k * units * 4 * memory.ACTIVATION_STORE
    acting = n * (2 * obs_bytes + action_bytes + 4 * 4) * (2 + config.n_step) + n * units * 4
    work = sampled + backward + acting + memory.LEARNER_TEMPORARIES * learner
    return memory.Footprint(replay_bytes=replay, working_bytes=work)


# -- continuous actor-critic pieces (DDPG, TD3, SAC) -----------------------------------------
def action_dim(space) -> int:
    if not isinstance(space, Box):
        raise ConfigError(f"this algorithm needs a continuous (Box) action space, got {space!r}")
    return int(np.prod(space.shape))


def init_critics(key, critic, obs_dim: int, act_dim: int, num: int):
    """``num`` independently initialized critics, params stacked on a leading axis."""
    return jax.vmap(lambda k: critic.init(k, jnp.zeros((1, obs_dim)), jnp.zeros((1, act_dim))))(
        jax.random.split(key, num))


def critic_values(critic, stacked_params, obs, action) -> jax.Array:
    """``[C, B]`` Q-values of every critic."""
    return jax.vmap(lambda p: critic.apply(p, obs, action))(stacked_params)


def critic_step(state, critic, batch, targets, weights, tx, static: OffPolicyStatic):
    """One Adam step of every critic on ``E_w[0.5 (Q_i(s, a) - y)^2]`` (summed over critics).
    ``targets`` ``[B]`` must already be ``stop_gradient``-ed. Returns ``(critic params,
    opt_state, td [B] of the first critic, metrics)``."""
    check_transitions(batch, weights)
    chex.assert_equal_shape([targets, weights])

    def loss(critic_params):
        q = critic_values(critic, critic_params, batch.obs, batch.action)  # [C, B]
        chex.assert_equal_shape_suffix([q, targets], 1)
        per_critic = 0.5 * jnp.mean(weights * jnp.square(q - targets), axis=-1)
        return per_critic.sum(), q

    (value, q), grads = jax.value_and_grad(loss, has_aux=True)(state.params.critic)
    updates, opt_state = tx.update(grads, state.opt_state.critic, state.params.critic)
    td = targets - q[0]
    metrics = {"critic_loss": value, "td_error_abs_mean": jnp.abs(td).mean(),
               "td_error_abs_max": jnp.abs(td).max(), **diag.describe(q, "q"),
               **diag.describe(targets, "target")}
    metrics.update({f"critic_{k}": v for k, v in
                    diag.gradient_stats(grads, updates, static.verbosity).items()})
    return optax.apply_updates(state.params.critic, updates), opt_state, td, metrics


def actor_step(state, actor_loss, tx, static: OffPolicyStatic):
    """One Adam step of the actor on ``actor_loss(actor_params) -> (loss, aux)`` (which must
    treat the critics as constants). Returns ``(actor params, opt_state, metrics)``."""
    (value, aux), grads = jax.value_and_grad(actor_loss, has_aux=True)(state.params.actor)
    updates, opt_state = tx.update(grads, state.opt_state.actor, state.params.actor)
    metrics = {"actor_loss": value, **aux}
    metrics.update({f"actor_{k}": v for k, v in
                    diag.gradient_stats(grads, updates, static.verbosity).items()})
    return optax.apply_updates(state.params.actor, updates), opt_state, metrics


@struct.dataclass(frozen=True)
class ActorCriticGroups:
    """One entry per parameter group of DDPG / TD3: the parameters (online or target), their
    optimizers (``GradientTransformation``) or the optimizers' states."""

    actor: Any
    critic: Any  # critics stacked on a leading axis [C, ...]


def init_actor_critic(key, obs_dim: int, space, actor, critic,
                      num_critics: int) -> ActorCriticGroups:
    """Fresh parameters of an actor and ``num_critics`` stacked critics."""
    actor_key, critic_key = jax.random.split(key)
    return ActorCriticGroups(
        actor=actor.init(actor_key, jnp.zeros((1, obs_dim))),
        critic=init_critics(critic_key, critic, obs_dim, action_dim(space), num_critics))


def init_optimizers(tx, params):
    """The optimizer state of every group: ``tx.<group>.init(params.<group>)`` (``tx`` and
    ``params``: alike group containers, such as `ActorCriticGroups`)."""
    return type(tx)(**{f.name: getattr(tx, f.name).init(getattr(params, f.name))
                       for f in dataclasses.fields(tx)})


@dataclasses.dataclass(frozen=True)
class ActorCriticStatic(OffPolicyStatic):
    """The static fields of the off-policy actor-critics (DDPG, TD3, SAC)."""

    asymmetric_critic: bool = static(False, "the critics also see the env's privileged "
                                     "observation, the actor only its own part (an env that "
                                     "declares one: playground:TASK with env_kwargs critic_key)")
    actor_obs: int = static(0, "leading observation entries the actor sees (0: all); the "
                            "driver sets it from the env (asymmetric_critic)")

    def validate(self) -> None:
        super().validate()
        if self.asymmetric_critic and (self.her != "none" or self.torso not in ("mlp", "auto")):
            raise ConfigError("asymmetric_critic needs flat observations: her=none and an MLP "
                              "torso")

    def for_env(self, env):
        """This config with ``actor_obs`` read from ``env`` (`acting.policy_obs_size`)."""
        return dataclasses.replace(
            self, actor_obs=acting.policy_obs_size(self.asymmetric_critic, env))


def actor_critic_networks(actor_cls, static: ActorCriticStatic, space) -> tuple:
    """``(actor, critic)`` modules for a Box action space: ``actor_cls(action_dim, hidden,
    activation, torso, policy_obs)`` (DDPG's deterministic actor, SAC's squashed Gaussian; the
    actor sees the first ``static.actor_obs`` observation entries) and a `Critic`
    ``(obs [B, obs_dim], action [B, action_dim]) -> Q [B]`` of the same widths (all entries)."""
    if static.asymmetric_critic and not static.actor_obs:
        raise ConfigError("asymmetric_critic=True but actor_obs is unset: build the config "
                          "with config.for_env(env) (the driver does)")
    dim = action_dim(space)
    return (actor_cls(dim, tuple(static.hidden), static.activation, static.torso,
                      static.actor_obs),
            Critic(tuple(static.hidden), static.activation, static.torso))


def critic_values_min(critic, stacked_params, obs, action) -> jax.Array:
    """``[B]`` the smallest Q-value over the stacked critics (clipped double Q with two)."""
    return critic_values(critic, stacked_params, obs, action).min(axis=0)


def acting_parts(networks, static, env, env_params):
    """``(actor, critic, flatten)`` for the act / value functions built from raw env obs;
    ``networks(static, action_space) -> (actor, critic)``."""
    actor, critic = networks(static, env.action_space(env_params))
    obs_space = env.observation_space(env_params)
    return actor, critic, lambda obs: flatten_obs(obs, obs_space)


# -- acting -------------------------------------------------------------------------------------
def make_act_from(make_agent_action, explore):
    """``make_act(static, env, env_params) -> act(state, obs, key, deterministic)`` of an
    off-policy algorithm (`jaxrl.algos.acting`): its deterministic action
    (``make_agent_action``), or the action ``explore`` takes in training (epsilon-greedy,
    Gaussian noise, a policy sample)."""

    def make_act(static, env, env_params):
        obs_space, space = env.observation_space(env_params), env.action_space(env_params)

        def sample(state, obs, key):
            # outside training (evaluation, demonstrations) noise is drawn afresh: the OU
            # processes of action_noise="ou" belong to the training envs
            fresh = dataclasses.replace(state, noise=None) if isinstance(
                state, OffPolicyState) else state
            return explore(fresh, flatten_obs(obs, obs_space), key, static, space)

        return acting.make_act(make_agent_action(static, env, env_params), sample, space)

    return make_act
