"""Generative Adversarial Imitation Learning (Ho & Ermon, 2016), PPO as the generator.

    expert = the demonstration set's (s, a) pairs                   (imitation.expert)
    for each update:                                               (onpolicy.make_train_step)
        collect T steps from N envs with pi_old; the env's reward is logged, never used
        for each discriminator epoch, for each minibatch:          (relabel)
            L_D = -log D(s_E, a_E) - log(1 - D(s, a))               (disc_loss)
                  + c_gp (||grad D(x~)|| - 1)^2 on interpolates x~ of expert and policy pairs
            phi <- Adam(clip(grad L_D))
        r_t = -log(1 - D(s_t, a_t))                                 (learned_reward)
        PPO's update on r: GAE bootstrapped through truncation, clipped surrogate

``D(s, a) = sigmoid(f_phi(s, a))`` is the probability that a pair is the expert's; ``s`` is
normalized with the agent's observation statistics, ``a`` one-hot (discrete) or in ``[-1, 1]``
(Box: policy samples are clipped there, as the expert's recorded actions are). ``reward="airl"``
uses ``log D - log(1 - D)`` instead, a reward of either sign (no survival bias in envs where
an episode's length is the agent's doing).

Diagnostics: the discriminator's accuracy on expert and on policy pairs, its loss, the gradient
penalty, the mean learned reward; ``episode_return_mean`` stays the env's true return.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import jax
import jax.numpy as jnp
import optax
from flax import struct

from envs.spaces import Discrete
from jaxrl.algos import imitation, onpolicy, ppo
from jaxrl.algos.families import family_defaults
from jaxrl.config import NON_NEGATIVE, POSITIVE, AlgoConfig, ConfigError, static, traced
from jaxrl.ops import clipped_adam, permutation
from jaxrl.parts.heads import MLP

REWARDS = ("gail", "airl")


@dataclasses.dataclass(frozen=True)
class GAILStatic(ppo.PPOStatic):
    """PPO's static fields, the demonstrations and the discriminator's shape and schedule."""

    demos: str = static("", imitation.DEMOS_DOC)
    disc_hidden: tuple[int, ...] = static((64, 64), "discriminator MLP widths")
    disc_epochs: int = static(1, "discriminator passes over each rollout")
    disc_minibatches: int = static(4, "discriminator minibatches per pass (each paired with as "
                                      "many expert steps)")
    reward: str = static("gail", "learned reward: gail = -log(1 - D) | airl = log D - log(1 - D)")

    def validate(self) -> None:
        super().validate()
        if self.recurrent:
            raise ConfigError("gail trains a feed-forward policy (rnn='none')")
        if self.reward not in REWARDS:
            raise ConfigError(f"reward must be one of {REWARDS}, got {self.reward!r}")
        if self.steps_per_update % self.disc_minibatches:
            raise ConfigError(f"num_envs * num_steps ({self.steps_per_update}) must be divisible "
                              f"by disc_minibatches ({self.disc_minibatches})")


@struct.dataclass(frozen=True)
class GAILHparams(ppo.PPOHparams):
    """PPO's traced hyperparameters and the discriminator's."""

    disc_learning_rate: float = traced(3e-4, "Adam learning rate of the discriminator",
                                       valid=POSITIVE)
    grad_penalty: float = traced(0.0, "coefficient of the gradient penalty (0: none)",
                                 valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class GAILConfig(AlgoConfig, GAILHparams, GAILStatic):
    """GAIL's config: PPO's fields, the demonstrations and the discriminator's."""


def default_config(env_name: str) -> GAILConfig:
    """PPO's defaults for the env's family, and the discriminator's, with GAIL's entry of the
    family (`jaxrl.algos.families`: continuous control takes the ``airl`` reward)."""
    config = GAILConfig(**ppo.default_config(env_name).to_dict())
    return config.replace(**family_defaults("gail", env_name))


@struct.dataclass
class Discriminator:
    params: Any  # the MLP's flax variables
    opt_state: Any


@struct.dataclass
class GAILState(onpolicy.OnPolicyState):
    disc: Discriminator


def disc_network(static_: GAILStatic) -> MLP:
    return MLP(hidden=tuple(static_.disc_hidden), out=1, activation="tanh")


def disc_optimizer(hp: GAILHparams) -> optax.GradientTransformation:
    return clipped_adam(hp, hp.disc_learning_rate)


def pair_features(state, obs: jax.Array, action: jax.Array, static_: GAILStatic, space
                  ) -> jax.Array:
    """``[B, obs_dim + action features]``: normalized ``obs [B, obs_dim]`` and the agent
    ``action`` one-hot (discrete) or clipped to ``[-1, 1]``."""
    x = onpolicy.normalize_obs(state, obs, static_)
    if isinstance(space, Discrete):
        a = jax.nn.one_hot(action, space.n)
    else:
        a = jnp.clip(action.reshape(action.shape[0], -1), -1.0, 1.0)
    return jnp.concatenate([x, a], axis=-1)


def logits(network: MLP, params, x: jax.Array) -> jax.Array:
    """``[B]`` logits of D (positive: judged the expert's)."""
    out: jax.Array = network.apply(params, x)  # type: ignore[assignment]  # [B, 1]
    return out[..., 0]


def disc_loss(params, network: MLP, expert_x, policy_x, key, hp: GAILHparams):
    """Binary cross-entropy (expert 1, policy 0) plus the gradient penalty on interpolates;
    aux: the loss terms and the accuracy on each side."""
    expert_l, policy_l = logits(network, params, expert_x), logits(network, params, policy_x)
    bce = jnp.mean(jax.nn.softplus(-expert_l)) + jnp.mean(jax.nn.softplus(policy_l))
    mix = jax.random.uniform(key, (expert_x.shape[0], 1))
    between = mix * expert_x + (1.0 - mix) * policy_x
    grads = jax.vmap(jax.grad(lambda x: logits(network, params, x[None])[0]))(between)
    penalty = jnp.mean(jnp.square(jnp.linalg.norm(grads, axis=-1) - 1.0))
    aux = {"disc_loss": bce, "disc_grad_penalty": penalty,
           "disc_accuracy_expert": jnp.mean(expert_l > 0),
           "disc_accuracy_policy": jnp.mean(policy_l < 0)}
    return bce + hp.grad_penalty * penalty, aux


def learned_reward(logit: jax.Array, kind: str) -> jax.Array:
    """The policy's reward from D's logits ``f``: ``-log(1 - D) = softplus(f)`` (gail) or
    ``log D - log(1 - D) = f`` (airl)."""
    return jax.nn.softplus(logit) if kind == "gail" else logit


def train_discriminator(state: GAILState, policy_x: jax.Array, expert_data, key,
                        static_: GAILStatic, env, env_params) -> tuple[Discriminator, dict]:
    """``disc_epochs`` passes over the rollout's pairs ``policy_x [B, F]`` in
    ``disc_minibatches`` minibatches, each against as many expert pairs drawn uniformly."""
    hp = cast(GAILHparams, state.hparams)
    network, tx = disc_network(static_), disc_optimizer(hp)
    space = env.action_space(env_params)
    size = policy_x.shape[0] // static_.disc_minibatches

    def step(disc: Discriminator, inputs):
        mb, k = inputs
        sample_key, penalty_key = jax.random.split(k)
        expert = imitation.sample(expert_data, sample_key, size)
        expert_x = pair_features(state, expert.obs, expert.action, static_, space)
        grads, aux = jax.grad(disc_loss, has_aux=True)(disc.params, network, expert_x, mb,
                                                       penalty_key, hp)
        updates, opt_state = tx.update(grads, disc.opt_state, disc.params)
        return Discriminator(optax.apply_updates(disc.params, updates), opt_state), aux

    def epoch(disc: Discriminator, k):
        order_key, steps_key = jax.random.split(k)
        shuffled = policy_x[permutation(order_key, policy_x.shape[0])]
        minibatches = shuffled.reshape(static_.disc_minibatches, size, -1)
        keys = jax.random.split(steps_key, static_.disc_minibatches)
        return jax.lax.scan(step, disc, (minibatches, keys))

    disc, aux = jax.lax.scan(epoch, state.disc, jax.random.split(key, static_.disc_epochs))
    return disc, jax.tree.map(jnp.mean, aux)


def relabel(state: GAILState, traj, key, static_: GAILStatic, env, env_params):
    """Train D on this rollout against the expert, then give the rollout D's rewards."""
    expert_data = imitation.expert(static_.demos, env, env_params)
    space = env.action_space(env_params)
    steps = traj.obs.shape[0] * traj.obs.shape[1]
    policy_x = pair_features(state, traj.obs.reshape(steps, -1),
                             traj.action.reshape(steps, *traj.action.shape[2:]), static_, space)
    disc, metrics = train_discriminator(state, policy_x, expert_data, key, static_, env,
                                        env_params)
    reward = learned_reward(logits(disc_network(static_), disc.params, policy_x), static_.reward)
    metrics["learned_reward_mean"] = jnp.mean(reward)
    state = dataclasses.replace(state, disc=disc)
    return state, dataclasses.replace(traj, reward=reward.reshape(traj.reward.shape)), metrics


_ppo_init = onpolicy.make_init(ppo.optimizers)


def init(key: jax.Array, env, env_params, config, hparams: GAILHparams | None = None
         ) -> GAILState:
    """PPO's initial state (the same for the same key) and a fresh discriminator."""
    hp = config.hparams() if hparams is None else hparams
    static_ = config.static()
    expert_data = imitation.expert(static_.demos, env, env_params)  # checked before compiling
    agent = _ppo_init(key, env, env_params, config, hparams)
    space = env.action_space(env_params)
    x = pair_features(agent, expert_data.obs[:1], expert_data.action[:1], static_, space)
    params = disc_network(static_).init(jax.random.fold_in(key, 1), x)
    fields = {f.name: getattr(agent, f.name) for f in dataclasses.fields(agent)}
    return GAILState(**fields, disc=Discriminator(params, disc_optimizer(hp).init(params)))


ALGORITHM = onpolicy.algorithm("gail", GAILConfig, default_config, ppo.update, ppo.optimizers,
                               relabel=relabel, init=init, imitation=True)
