"""Machinery shared by the on-policy algorithms (PPO, VPG, A2C, TRPO).

A new on-policy algorithm is its config (static fields on an `OnPolicyStatic` subclass, traced
ones on an `OnPolicyHparams` subclass), its loss and its update rule
``update(state, batch, key, static, network) -> Updated`` plus the optimizers it keeps
(``optimizers(hp, static, lr_scale) -> ParamGroups`` of ``GradientTransformation``). Traced
values are read from ``state.hparams`` only, static ones from the static view ``static``.
Everything else lives here once: the rollout, observation normalization, reward scaling,
truncation-aware advantages (`make_batch`), parameter groups, minibatch SGD, value regression,
diagnostics and state bookkeeping (`make_train_step`, `make_init`).

Parameter groups (`ParamGroups`): ``all`` (every parameter), ``policy`` and ``value`` (the two
separate MLPs of an unshared `ActorCritic`). An algorithm's optimizer state holds one optimizer
state per group it trains.

Length: the shared train step of four algorithms; each step of it is a short function, kept
in one file so the order of rollout, batch, update and bookkeeping reads top to bottom.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import chex
import jax
import jax.numpy as jnp
import optax
from flax import struct

from envs.core import wrapped_attr
from envs.spaces import Discrete
from envs.wrappers import completed_episode_summary
from jaxrl import diagnostics as diag
from jaxrl import memory
from jaxrl.algos import acting
from jaxrl.algos.acting import PolicyState, PolicyStatic
from jaxrl.config import ConfigError, Hparams, StaticConfig, static, traced
from jaxrl.networks import ActorCritic, check_network_fields, resolve_torso, to_env_action
from jaxrl.ops import (
    RunningMeanStd,
    gae,
    linear_schedule,
    normalize,
    permutation,
    popart,
    running_stats_init,
    running_stats_update,
)
from jaxrl.recurrent import RNNS, RecurrentActorCritic, unroll
from jaxrl.rollout import EnvCarry, collect_with_memory, flatten_obs, obs_dim, reset_envs

OBS_CLIP = 10.0


@dataclasses.dataclass(frozen=True)
class OnPolicyStatic(StaticConfig):
    """Static fields every on-policy algorithm has."""

    num_envs: int = static(4, "parallel envs per seed")
    num_steps: int = static(128, "rollout length T per env per update")
    hidden: tuple[int, ...] = static((64, 64), "MLP widths (policy and value nets)")
    torso: str = static("auto", "auto | mlp | minatar_cnn | nature_cnn | nature_cnn_small"
                        " (auto: by observation shape; a conv torso ends in its own dense layer"
                        " and replaces hidden)")
    activation: str = static("tanh")
    init_log_std: float = static(0.0, "initial log-std of Gaussian policies")
    normalize_obs: bool = static(True, "running mean/var observation normalization")
    normalize_reward: bool = static(False, "scale rewards by the running std of returns")
    popart: bool = static(False, "PopArt: the value head learns targets normalized by running "
                          "statistics, its last layer rescaled to preserve outputs")
    bootstrap_truncation: bool = static(True, "False treats time limits as termination (wrong)")
    shared_network: bool = static(False, "one torso for policy and value (else two MLPs)")
    asymmetric_critic: bool = static(False, "the value net also sees the env's privileged "
                                     "observation, the policy only its own part (an env that "
                                     "declares one: playground:TASK with env_kwargs critic_key)")
    rnn: str = static("none", "none | gru | lstm: a recurrent core between the torso and the "
                      "heads (PPO, A2C); minibatches are then made of whole envs")
    rnn_size: int = static(128, "units of the recurrent core")
    normalize_advantages: bool = static(True, "standardize advantages (per minibatch)")
    anneal_lr: bool = static(True, "linearly anneal the learning rate(s) to 0")
    verbosity: str = static("basic", "diagnostics level: basic | debug | full")

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def recurrent(self) -> bool:
        return self.rnn != "none"

    def validate(self) -> None:
        check_network_fields(self.activation, self.torso, self.verbosity, diag.LEVELS)
        if self.rnn not in RNNS:
            raise ConfigError(f"rnn must be one of {RNNS}, got {self.rnn!r}")
        if self.asymmetric_critic and (self.shared_network or self.recurrent):
            raise ConfigError("asymmetric_critic needs separate feed-forward policy and value "
                              "nets (shared_network=False, rnn=none)")


@struct.dataclass(frozen=True)
class OnPolicyHparams(Hparams):
    """Traced hyperparameters every on-policy algorithm has."""

    gamma: float = traced(0.99)
    gae_lambda: float = traced(0.95)
    max_grad_norm: float = traced(0.5, "global-norm gradient clipping")
    adam_eps: float = traced(1e-5, "Adam epsilon (added outside the square root)")
    total_steps: float = traced(0.0, "env steps per seed; the LR anneal horizon (set by train)")
    popart_beta: float = traced(0.03, "PopArt: step of the target statistics per update")


@dataclasses.dataclass(frozen=True)
class SeparateValueStatic(OnPolicyStatic):
    """On-policy methods whose value MLP is regressed apart from the policy (VPG, TRPO)."""

    value_epochs: int = static(5, "passes of value regression per update")
    value_minibatches: int = static(4, "minibatches per value-regression pass")

    def validate(self) -> None:
        super().validate()
        if self.shared_network:
            raise ConfigError("shared_network=True needs a joint loss; this algorithm fits the "
                              "policy and the value function separately")
        if self.recurrent:
            raise ConfigError(f"rnn={self.rnn!r}: recurrent policies are trained by PPO and A2C; "
                              "this algorithm fits the policy and the value on flattened samples")
        if self.steps_per_update % self.value_minibatches:
            raise ConfigError(f"num_envs * num_steps ({self.steps_per_update}) must be divisible "
                              f"by value_minibatches ({self.value_minibatches})")


@struct.dataclass(frozen=True)
class SeparateValueHparams(OnPolicyHparams):
    """Traced hyperparameters of VPG and TRPO (the value regression's own learning rate)."""

    vf_learning_rate: float = traced(1e-3, "Adam learning rate of the value regression")


@struct.dataclass
class RewardScaler:
    """Running statistics of the discounted return, for reward scaling."""

    stats: RunningMeanStd  # over scalars
    discounted: jax.Array  # [N] running discounted return per env


@struct.dataclass(frozen=True)
class ParamGroups:
    """One entry per parameter group: ``all`` (every parameter), or ``policy`` and ``value``
    (the two MLPs of an unshared `ActorCritic`); None for a group the algorithm does not train.
    The entries are the groups' optimizers (``GradientTransformation``) or their states."""

    all: Any = None
    policy: Any = None
    value: Any = None

    def items(self) -> list[tuple[str, Any]]:
        """``(group, entry)`` for the groups in use."""
        return [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None]


@struct.dataclass
class OnPolicyState:
    params: Any  # the `ActorCritic`'s flax variables
    opt_state: ParamGroups  # one optimizer state per trained parameter group
    obs_stats: RunningMeanStd  # [obs_dim]
    reward_scaler: RewardScaler
    value_stats: popart.PopArtStats  # PopArt's target statistics (unused unless static.popart)
    carry: EnvCarry
    memory: Any  # a recurrent policy's memory per env (leaves [N, ...]); () if feed-forward
    key: jax.Array
    update_step: jax.Array  # [] int32
    env_steps: jax.Array  # [] int32 per seed
    hparams: OnPolicyHparams  # the algorithm's subclass of it, float32 scalars


@struct.dataclass(frozen=True)
class Updated:
    """What an algorithm's update returns."""

    params: Any
    opt_state: ParamGroups
    metrics: dict  # scalar metrics; must include the policy ``entropy``


def make_network(static: PolicyStatic, env, env_params) -> ActorCritic | RecurrentActorCritic:
    torso = resolve_torso(static.torso, env.observation_space(env_params).shape)
    args = (env.action_space(env_params), tuple(static.hidden), static.activation,
            static.init_log_std, static.shared_network, torso)
    mask = action_mask_size(static, env)
    if static.recurrent:
        return RecurrentActorCritic(*args, static.rnn, static.rnn_size)
    own = acting.policy_obs_size(getattr(static, "asymmetric_critic", False), env)  # BC: none
    return ActorCritic(*args, policy_obs=own, action_mask=mask)


def action_mask_size(static: PolicyStatic, env) -> int:
    """How many trailing observation entries mask the policy's actions: the env's
    ``action_mask_size`` (0: none). The mask must reach the policy as the env gives it:
    `ConfigError` with observation normalization or a recurrent policy."""
    size = int(wrapped_attr(env, "action_mask_size", 0) or 0)
    if size and (static.normalize_obs or static.recurrent):
        raise ConfigError("this env's observation ends in an action mask, which the policy "
                          "reads as given: set normalize_obs=False (and rnn=none)")
    return size


def initial_memory(static: PolicyStatic, network, num_envs: int):
    """The policy's memory of ``num_envs`` envs at an episode start (``()`` if feed-forward)."""
    return network.initial_memory((num_envs,)) if static.recurrent else ()


# ----------------------------------------------------------------------------- parameters


_GROUP_KEYS = {"policy": "policy", "value": "value_net"}


def param_group(params, group: str):
    """The parameters one optimizer owns: ``"all"`` | ``"policy"`` | ``"value"`` (a field of
    `ParamGroups`)."""
    return params if group == "all" else params["params"][_GROUP_KEYS[group]]


def with_param_group(params, group: str, sub):
    """``params`` with one group replaced (a new pytree; the input is untouched)."""
    if group == "all":
        return sub
    return {**params, "params": {**params["params"], _GROUP_KEYS[group]: sub}}


def policy_log_std(params) -> jax.Array:
    """``[act_dim]`` the state-independent log-std of a Gaussian policy's parameters."""
    return param_group(params, "policy")["log_std"]


class Progress(Protocol):
    """What the linear annealings read of a train state (an on-policy one, PQN's): the env
    steps so far and the traced ``hparams`` with their ``total_steps``."""

    @property
    def env_steps(self) -> jax.Array: ...
    @property
    def hparams(self) -> Any: ...


class RolloutSwitches(Protocol):
    """The static switches `lr_scale` and `loss_flags` read (an on-policy config's, PQN's)."""

    @property
    def anneal_lr(self) -> bool: ...
    @property
    def bootstrap_truncation(self) -> bool: ...


def progress_scale(state: Progress) -> jax.Array:
    """``[]`` the share of the run still ahead: 1 at the start, 0 at ``total_steps`` (1 throughout
    when no horizon is set). The factor every linear annealing multiplies by."""
    horizon = state.hparams.total_steps
    return jnp.where(horizon > 0, linear_schedule(1.0, 0.0, state.env_steps, horizon), 1.0)


def lr_scale(state: Progress, static: RolloutSwitches) -> jax.Array:
    """``[]`` the learning rate's factor: `progress_scale` with ``anneal_lr``, else 1."""
    return progress_scale(state) if static.anneal_lr else jnp.float32(1.0)


def make_init(optimizers):
    """``init(key, env, env_params, config, hparams=None) -> OnPolicyState`` for an algorithm
    whose optimizers are ``optimizers(hp, static, lr_scale) -> ParamGroups``."""

    def init(key: jax.Array, env, env_params, config, hparams: OnPolicyHparams | None = None
             ) -> OnPolicyState:
        """Fresh agent and envs for one seed. ``config``: a whole config (its traced values go
        into ``state.hparams``), or a static view given with ``hparams``."""
        hp = config.hparams() if hparams is None else hparams
        static = config.static()
        net_key, env_key, state_key = jax.random.split(key, 3)
        dim = obs_dim(env.observation_space(env_params))
        network = make_network(static, env, env_params)
        obs = jnp.zeros((1, dim))
        params = (network.init(net_key, initial_memory(static, network, 1), obs,
                               jnp.ones((1,), bool))
                  if static.recurrent else network.init(net_key, obs))
        opt_state = ParamGroups(**{group: tx.init(param_group(params, group)) for group, tx
                                   in optimizers(hp, static, jnp.float32(1.0)).items()})
        return OnPolicyState(
            params=params,
            opt_state=opt_state,
            obs_stats=running_stats_init((dim,)),
            reward_scaler=RewardScaler(running_stats_init(()), jnp.zeros((static.num_envs,))),
            value_stats=popart.init(),
            carry=reset_envs(env_key, env, env_params, static.num_envs),
            memory=initial_memory(static, network, static.num_envs),
            key=state_key,
            update_step=jnp.zeros((), jnp.int32),
            env_steps=jnp.zeros((), jnp.int32),
            hparams=hp,
        )

    return init


def normalize_obs(state: PolicyState, obs: jax.Array, static: PolicyStatic) -> jax.Array:
    if not static.normalize_obs:
        return obs
    return normalize(state.obs_stats, obs, clip=OBS_CLIP)


def policy_sample(params, network, obs_normalized, key):
    """``(action, log_prob)`` sampled from the policy at normalized observations."""
    return network.apply(params, obs_normalized, method=network.dist).sample_and_log_prob(key)


def recurrent_step(network, params, memory, obs: jax.Array) -> tuple[Any, Any, jax.Array]:
    """One step of a recurrent policy within an episode (no reset): ``(memory, dist, value)``
    at normalized ``obs [..., obs_dim]`` from ``memory`` (leaves ``[..., ...]``)."""
    out: tuple[Any, Any, jax.Array] = network.apply(params, memory, obs,
                                                    jnp.zeros(obs.shape[:-1], bool))
    return out


def rollout(state: OnPolicyState, key, static: OnPolicyStatic, env, env_params, network):
    """Collect ``[T, N]`` transitions with the current policy and frozen obs statistics.
    Returns ``(env carry, policy memory, steps)`` to continue from."""

    def act(memory, obs, k):
        x = normalize_obs(state, obs, static)
        if not static.recurrent:
            return (memory, *policy_sample(state.params, network, x, k))
        memory, dist, _ = recurrent_step(network, state.params, memory, x)
        return (memory, *dist.sample_and_log_prob(k))

    return collect_with_memory(key, env, env_params, state.carry, state.memory, act,
                               static.num_steps)


def update_reward_scaler(state: OnPolicyState, traj, static: OnPolicyStatic) -> RewardScaler:
    """Track the running discounted return per env and its variance (if reward scaling)."""
    scaler = state.reward_scaler
    if not static.normalize_reward:
        return scaler
    gamma = state.hparams.gamma
    done = jnp.logical_or(traj.terminated, traj.truncated)

    def accumulate(running, step):
        reward, d = step
        running = running * gamma + reward
        return jnp.where(d, 0.0, running), running

    discounted, returns = jax.lax.scan(accumulate, scaler.discounted, (traj.reward, done))
    return RewardScaler(running_stats_update(scaler.stats, returns.reshape(-1)), discounted)


def scale_rewards(scaler: RewardScaler, rewards: jax.Array, static: OnPolicyStatic) -> jax.Array:
    if not static.normalize_reward:
        return rewards
    return rewards / jnp.sqrt(scaler.stats.var + 1e-8)


def loss_flags(traj, static: RolloutSwitches) -> tuple[jax.Array, jax.Array]:
    """``(terminated, truncated)`` as the loss sees them. ``bootstrap_truncation=False`` is the
    classic bug (time limit treated as termination), kept as a switch to measure it."""
    if static.bootstrap_truncation:
        return traj.terminated, traj.truncated
    return jnp.logical_or(traj.terminated, traj.truncated), jnp.zeros_like(traj.truncated)


@struct.dataclass
class Batch:
    """One rollout. Feed-forward: flattened, leaves ``[B, ...]`` with B = T * N. Recurrent:
    sequences, leaves ``[T, N, ...]`` (written ``[B]`` below), plus ``first`` and ``memory``,
    from which the loss re-runs the network (`forward`)."""

    obs: jax.Array  # [B, obs_dim] normalized with the acting statistics
    action: jax.Array  # [B] or [B, act_dim]
    log_prob: jax.Array  # [B] log pi_old(a|s)
    value: jax.Array  # [B] V_old(s)
    advantage: jax.Array  # [B] GAE(lambda), bootstrapped through truncation
    target: jax.Array  # [B] value target = advantage + V_old(s) (the lambda-return)
    first: jax.Array | None = None  # recurrent: [T, N] an episode's first step (memory reset)
    memory: Any = None  # recurrent: the memory before the first step, leaves [N, ...]


def check_batch(batch: Batch) -> None:
    """The shape contract at a loss's input (checked at trace time): log-probs, values,
    advantages and targets ``[B]`` (``[T, N]`` for sequences), every other per-step leaf
    ``[B, ...]``."""
    per_sample = [batch.log_prob, batch.value, batch.advantage, batch.target]
    sequence = batch.first is not None
    chex.assert_rank(per_sample, 2 if sequence else 1)
    chex.assert_equal_shape(per_sample)
    steps = [batch.obs, batch.action, *per_sample] + ([batch.first] if sequence else [])
    chex.assert_equal_shape_prefix(steps, 2 if sequence else 1)


def forward(network, params, batch: Batch):
    """``(dist, value)`` of the network at the batch's observations: applied to the samples,
    or (recurrent) unrolled over each env's sequence from its stored memory."""
    if batch.first is None:
        return network.apply(params, batch.obs)
    _, dist, value = unroll(network, params, batch.memory, batch.obs, batch.first)
    return dist, value


def first_steps(traj) -> jax.Array:
    """``[T, N]`` whether step t is an episode's first: the step before it ended one. (The
    rollout's first step continues from a memory already reset, so it is never marked.)"""
    done = jnp.logical_or(traj.terminated, traj.truncated)
    return jnp.concatenate([jnp.zeros_like(done[:1]), done[:-1]], axis=0)


def value_heads(state: OnPolicyState, obs, next_obs, traj, static: OnPolicyStatic, network):
    """``(head at obs, head at next_obs)``, each ``[T, N]``. Recurrent: the rollout re-run from
    its stored memory; the head at ``next_obs[t]`` is one more step from the memory after step t
    (before any reset), so a truncated episode is bootstrapped with the memory it ended with."""
    if not static.recurrent:
        return (network.apply(state.params, obs, method=network.value),
                network.apply(state.params, next_obs, method=network.value))
    memories, _, head = unroll(network, state.params, state.memory, obs, first_steps(traj))
    _, _, next_head = recurrent_step(network, state.params, memories, next_obs)
    return head, next_head


def make_batch(state: OnPolicyState, traj, rewards, static: OnPolicyStatic, network) -> Batch:
    """Rollout ``[T, N]`` -> `Batch` (normalized obs, old log-probs/values, GAE advantages);
    flattened, or kept as sequences for a recurrent policy."""
    obs = normalize_obs(state, traj.obs, static)
    next_obs = normalize_obs(state, traj.next_obs, static)
    head, next_head = value_heads(state, obs, next_obs, traj, static, network)
    values, next_values = value_of_head(state, head, static), value_of_head(state, next_head, static)
    terminated, truncated = loss_flags(traj, static)
    hp = state.hparams
    adv = gae(rewards, values, next_values, terminated, truncated, hp.gamma, hp.gae_lambda)
    if static.recurrent:
        return Batch(obs, traj.action, traj.log_prob, values, adv, adv + values,
                     first_steps(traj), state.memory)
    flat = lambda x: x.reshape(-1, *x.shape[2:])
    return Batch(flat(obs), flat(traj.action), flat(traj.log_prob), flat(values), flat(adv),
                 flat(adv + values))


# -- PopArt ------------------------------------------------------------------------------------
def value_of_head(state: PolicyState, head: Any, static: PolicyStatic) -> jax.Array:
    """The value for the value head's output ``head [...]``: the output itself, or with PopArt its
    denormalization ``sigma * head + mu`` under the agent's target statistics."""
    return popart.denormalize(state.value_stats, head) if static.popart else head


def value_head_layer(params) -> str:
    """The name of the value network's last linear layer (``Dense_<largest index>``)."""
    layers = [k for k in param_group(params, "value") if k.startswith("Dense_")]
    return max(layers, key=lambda k: int(k.removeprefix("Dense_")))


def adapt_value_head(state: OnPolicyState, batch: Batch, static: OnPolicyStatic
                     ) -> tuple[OnPolicyState, Batch, dict]:
    """PopArt's step before an update (van Hasselt et al. 2016), a no-op without
    ``static.popart``:

        (mu, sigma) <- EMA of the batch's lambda-return targets, step beta   ("ART")
        value head's last layer rescaled so sigma' v' + mu' = sigma v + mu  ("POP")
        the batch's values and targets normalized by the new statistics, and its advantages
        divided by sigma' (so the policy's step does not grow with the reward scale)

    Returns ``(state with new statistics and head, batch in normalized units, metrics)``."""
    if not static.popart:
        return state, batch, {}
    old = state.value_stats
    new = popart.update(old, batch.target, state.hparams.popart_beta)
    value = param_group(state.params, "value")
    layer = value_head_layer(state.params)
    kernel, bias = popart.preserve(value[layer]["kernel"], value[layer]["bias"], old, new)
    params = with_param_group(state.params, "value",
                              {**value, layer: {"kernel": kernel, "bias": bias}})
    sigma = popart.scale(new)
    batch = dataclasses.replace(batch, value=popart.normalize(new, batch.value),
                                target=popart.normalize(new, batch.target),
                                advantage=batch.advantage / sigma)
    metrics = {"popart_mean": new.mean, "popart_sigma": sigma}
    return dataclasses.replace(state, params=params, value_stats=new), batch, metrics


def standardize(advantages: jax.Array, static: OnPolicyStatic) -> jax.Array:
    """Zero-mean, unit-std advantages if ``static.normalize_advantages``."""
    if not static.normalize_advantages:
        return advantages
    return (advantages - advantages.mean()) / (advantages.std() + 1e-8)


def shuffle_into_minibatches(key, batch, num_minibatches: int):
    """Permute a ``[B, ...]`` pytree and split it into ``[M, B / M, ...]``. A sequence `Batch`
    is split by envs instead: ``[T, N, ...]`` -> ``[M, T, N / M, ...]`` (its memory
    ``[N, ...]`` -> ``[M, N / M, ...]``), so each minibatch holds whole sequences."""
    if isinstance(batch, Batch) and batch.first is not None:
        return shuffle_envs_into_minibatches(key, batch, num_minibatches)
    size = jax.tree.leaves(batch)[0].shape[0]
    perm = permutation(key, size)
    return jax.tree.map(
        lambda x: x[perm].reshape(num_minibatches, size // num_minibatches, *x.shape[1:]), batch
    )


def shuffle_envs_into_minibatches(key, batch: Batch, num_minibatches: int) -> Batch:
    """A sequence `Batch`'s envs permuted and split into ``num_minibatches`` groups."""
    num_envs = batch.action.shape[1]
    perm = permutation(key, num_envs)
    size = num_envs // num_minibatches

    def split_steps(x):  # [T, N, ...] -> [M, T, N / M, ...]
        x = x[:, perm].reshape(x.shape[0], num_minibatches, size, *x.shape[2:])
        return jnp.moveaxis(x, 1, 0)

    def split_envs(x):  # [N, ...] -> [M, N / M, ...]
        return x[perm].reshape(num_minibatches, size, *x.shape[1:])

    memory = jax.tree.map(split_envs, batch.memory)
    steps = jax.tree.map(split_steps, dataclasses.replace(batch, memory=None))
    return dataclasses.replace(steps, memory=memory)


def minibatch_sgd(loss_fn, params, opt_state, tx, batch, key, epochs: int, num_minibatches: int,
                  verbosity: str):
    """``epochs`` passes of shuffled minibatch gradient steps on ``loss_fn(params, mb) ->
    (loss, aux)``. Returns ``(params, opt_state, aux and gradient stats averaged over steps)``.
    One minibatch means full-batch steps (no shuffle)."""
    grad_fn = jax.grad(loss_fn, has_aux=True)

    def step(carry, mb):
        params, opt_state = carry
        grads, aux = grad_fn(params, mb)
        updates, opt_state = tx.update(grads, opt_state, params)
        aux.update(diag.gradient_stats(grads, updates, verbosity))
        return (optax.apply_updates(params, updates), opt_state), aux

    def epoch(carry, epoch_key):
        if num_minibatches == 1:
            minibatches = jax.tree.map(lambda x: x[None], batch)
        else:
            minibatches = shuffle_into_minibatches(epoch_key, batch, num_minibatches)
        return jax.lax.scan(step, carry, minibatches)

    keys = jax.random.split(key, epochs)
    (params, opt_state), aux = jax.lax.scan(epoch, (params, opt_state), keys)
    return params, opt_state, jax.tree.map(jnp.mean, aux)


def fit_value(params, opt_state, tx, batch: Batch, key, static: SeparateValueStatic, network):
    """Regress the value MLP on the batch's lambda-return targets (VPG, TRPO): ``value_epochs``
    x ``value_minibatches`` Adam steps on ``0.5 (V(s) - target)^2``, the policy untouched.
    Returns ``(params, value opt_state, metrics prefixed value_)``."""

    def loss(value_params, mb: Batch):
        check_batch(mb)
        v = network.apply(with_param_group(params, "value", value_params), mb.obs,
                          method=network.value)
        value_loss = 0.5 * jnp.mean(jnp.square(v - mb.target))
        return value_loss, {"loss": value_loss}

    value_params, opt_state, aux = minibatch_sgd(
        loss, param_group(params, "value"), opt_state, tx, batch, key, static.value_epochs,
        static.value_minibatches, static.verbosity)
    metrics = {f"value_{k}": v for k, v in aux.items()}
    return with_param_group(params, "value", value_params), opt_state, metrics


def policy_shift(network, new_params, batch: Batch) -> dict:
    """How far the update moved the policy on the batch: ``approx_kl`` = E[(r - 1) - log r]
    (an unbiased, non-negative estimate of KL(old || new)), r = pi_new(a|s) / pi_old(a|s)."""
    log_ratio = forward(network, new_params, batch)[0].log_prob(batch.action)
    log_ratio = log_ratio - batch.log_prob
    return {"approx_kl": jnp.mean(jnp.expm1(log_ratio) - log_ratio)}


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
    obs_stats = state.obs_stats
    if static.normalize_obs:
        obs_stats = running_stats_update(obs_stats, traj.obs.reshape(-1, traj.obs.shape[-1]))
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
        metrics = {**updated.metrics, **popart_metrics, **relabel_metrics, **rollout_metrics(
            state, traj, batch.value, batch.target, batch.advantage, rewards,
            updated.metrics["entropy"], static, env, env_params, updated.params)}
        new_state = advance(state, traj, carry, memory, updated, key, reward_scaler, static)
        return new_state, metrics

    return train_step


def make_dist(static: PolicyStatic, env, env_params):
    """``dist(state, obs [..., *obs_shape]) -> distribution`` at raw env observations,
    normalized with the agent's statistics as in training."""
    network = make_network(static, env, env_params)
    obs_space = env.observation_space(env_params)

    def dist(state: PolicyState, obs):
        x = normalize_obs(state, flatten_obs(obs, obs_space), static)
        return network.apply(state.params, x, method=network.dist)

    return dist


def make_act(static: PolicyStatic, env, env_params):
    """``act(state, obs, key, deterministic) -> env action`` for raw env observations
    (``[..., *obs_shape]``): the policy's mode, or a sample of it (`jaxrl.algos.acting`)."""
    dist = make_dist(static, env, env_params)
    sample = lambda state, obs, key: dist(state, obs).sample(key)
    return acting.make_act(make_agent_action(static, env, env_params), sample,
                           env.action_space(env_params))


def make_policy(static: PolicyStatic, env, env_params) -> acting.Policy:
    """The policy with its memory (`acting.Policy`), for evaluation: a recurrent policy carries
    its memory from step to step; a feed-forward one is `make_act`'s."""
    if not static.recurrent:
        return acting.feed_forward(make_act(static, env, env_params))
    network = make_network(static, env, env_params)
    obs_space, action_space = env.observation_space(env_params), env.action_space(env_params)

    def step(state: PolicyState, memory, obs, key, deterministic: bool = True):
        x = normalize_obs(state, flatten_obs(obs, obs_space), static)
        memory, dist, _ = recurrent_step(network, state.params, memory, x)
        action = dist.mode() if deterministic else dist.sample(key)
        return memory, to_env_action(action_space, action)

    return acting.Policy(lambda n: initial_memory(static, network, n), step)


def make_value(static: PolicyStatic, env, env_params):
    """``value(state, obs [K, *obs_shape]) -> [K]`` state values (for probes and notebooks)."""
    network = make_network(static, env, env_params)
    obs_space = env.observation_space(env_params)

    def value(state: PolicyState, obs):
        x = normalize_obs(state, flatten_obs(obs, obs_space), static)
        return value_of_head(state, network.apply(state.params, x, method=network.value), static)

    return value


def make_agent_action(static: PolicyStatic, env, env_params):
    """``mode(state, obs) -> agent action`` in the agent's normalized action space."""
    dist = make_dist(static, env, env_params)
    return lambda state, obs: dist(state, obs).mode()


# -- memory model -------------------------------------------------------------------------------
def memory_model(config: OnPolicyStatic, state: OnPolicyState, obs_bytes: int,
                 action_bytes: int) -> memory.Footprint:
    """The on-policy family's memory model (`jaxrl.memory`): no replay, and the working set of
    one train step with ``B = num_envs * num_steps`` samples:

    * the rollout ``[T, N]``: obs, true next obs, action, reward, flags, log-prob, episode info;
    * the batch: normalized obs and next obs, values, next values, advantages, targets, scaled
      rewards, the flattened `Batch` and one shuffled copy of it;
    * the larger of two phases that do not overlap (XLA reuses the buffers): forward
      activations of every network on the whole batch (values, policy shift), and gradient
      activations on one minibatch (the whole batch without ``num_minibatches``: A2C, the
      full-batch policy steps of VPG / TRPO);
    * ``memory.LEARNER_TEMPORARIES`` copies of the learner (params and optimizer states).

    ``state`` may be abstract (``jax.eval_shape``); only its shapes are read.
    """
    learner = memory.tree_bytes((state.params, state.opt_state))
    units = memory.activation_units(state.params, config)
    batch = config.num_envs * config.num_steps
    minibatch = -(-batch // max(1, int(getattr(config, "num_minibatches", 1))))
    rollout = batch * (2 * obs_bytes + action_bytes + 4 + 2 + 4 + memory.INFO_BYTES)
    prepared = batch * (2 * obs_bytes + 7 * 4) + 2 * batch * (obs_bytes + action_bytes + 4 * 4)
    forward = batch * units * 4
    backward = minibatch * units * 4 * memory.ACTIVATION_STORE
    work = rollout + prepared + max(forward, backward) + memory.LEARNER_TEMPORARIES * learner
    return memory.Footprint(replay_bytes=0, working_bytes=work)
