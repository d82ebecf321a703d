"""Machinery shared by the off-policy algorithms (DQN, DDPG, TD3, SAC).

An off-policy algorithm is its config (static fields on an `OffPolicyStatic` subclass, traced
ones on an `OffPolicyHparams` subclass), its networks, an exploration rule and a learning step:

* ``init_learner(key, obs_dim, action_space, static, hp) -> (params, target_params, opt_state)``
* ``explore(state, obs [N, obs_dim], key, static, action_space) -> action [N, ...]``
* ``learn(state, batch, weights, key, static, action_space) -> Learned``

Traced values are read from ``state.hparams`` only, static ones from the static view
``static``. Acting outside training reuses ``explore`` (`exploring_policy`); the family's kit
(`algorithm`) makes the `Algorithm`. DDPG, TD3 and SAC share their networks, critics and acting
parts here (`ActorCriticGroups`, `actor_critic_networks`, `critic_values_min`,
`acting_parts`).

Everything else lives here once (`make_train_step`)::

    for each train step (log_interval rounds; metrics averaged over the rounds that learned):
        a_t = explore(s_t)                      (uniform random actions while warming up)
        step N envs; push the step's `Transition` (s_t, a_t, r_t, terminated_t,
        truncated_t, s_{t+1}) into the n-step window; add the n-step transition it emits
        to the replay buffer (on device)
        fold s_t into the observation statistics (a config with normalize_obs on: the buffer
        keeps raw observations and the learner normalizes a sampled batch, see
        `jaxrl.algos.obs_normalization`)
        once env_steps >= learning_starts, gradient_steps times:
            sample a batch (uniform or prioritized), learn, update priorities

Stored transitions keep the *true* next observation (the final one on a truncated step), so
a time limit bootstraps; ``bootstrap_truncation=False`` is the classic bug kept as a switch.
Transitions are `jaxrl.parts.buffers.nstep.NStepTransition`: ``(obs, action, reward, discount,
terminated, next_obs, steps)`` with the learner's target ``reward + discount * V(next_obs)``.
With ``frame_replay`` (stacked image observations, Atari's) the buffer's items point into a
`jaxrl.parts.buffers.frames.FrameStore` that keeps every frame once as uint8, and a sampled batch's
stacks are rebuilt exactly before the learner sees them.
"""

from jaxrl.algos.offpolicy.actor_critic import (
    ActorCriticGroups,
    ActorCriticStatic,
    ActorStep,
    acting_parts,
    actor_critic_networks,
    actor_step,
    critic_step,
    critic_values,
    critic_values_min,
    init_actor_critic,
    init_critics,
    init_optimizers,
)
from jaxrl.algos.offpolicy.config import (
    ACTION_NOISES,
    OffPolicyHparams,
    OffPolicyStatic,
    action_dim,
    check_action_noise,
    correlated_noise,
    warmup_rounds,
)
from jaxrl.algos.offpolicy.footprint import memory_model
from jaxrl.algos.offpolicy.kit import algorithm
from jaxrl.algos.offpolicy.policy import exploring_policy
from jaxrl.algos.offpolicy.replay import (
    _sample,
    beta_schedule,
    keep_if,
    reprioritize,
    sample,
    store,
)
from jaxrl.algos.offpolicy.state import (
    Learned,
    OffPolicyState,
    buffer_module,
    check_transitions,
    example_row,
    frame_shape,
    make_init,
    unflatten,
)
from jaxrl.algos.offpolicy.train_step import make_train_step, random_action

__all__ = [
    "ACTION_NOISES",
    "ActorCriticGroups",
    "ActorCriticStatic",
    "ActorStep",
    "Learned",
    "OffPolicyHparams",
    "OffPolicyState",
    "OffPolicyStatic",
    "_sample",
    "acting_parts",
    "action_dim",
    "actor_critic_networks",
    "actor_step",
    "algorithm",
    "beta_schedule",
    "buffer_module",
    "check_action_noise",
    "check_transitions",
    "correlated_noise",
    "critic_step",
    "critic_values",
    "critic_values_min",
    "example_row",
    "exploring_policy",
    "frame_shape",
    "init_actor_critic",
    "init_critics",
    "init_optimizers",
    "keep_if",
    "make_init",
    "make_train_step",
    "memory_model",
    "random_action",
    "reprioritize",
    "sample",
    "store",
    "unflatten",
    "warmup_rounds",
]
