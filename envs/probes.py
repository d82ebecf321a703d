"""Probe environments: tiny envs with exact answers that localize bugs (reading 004).

Each rung adds the smallest possible piece of functionality to the one before, so the first rung
an agent fails names the component that is broken. Every probe exposes its exact answer through
``probe.answer(gamma)``: query observations, the exact state values under the optimal policy, the
best action per query observation, and tolerances.

=====  ==============================  ==========================================================
rung   name                            what a failure localizes
=====  ==============================  ==========================================================
1      probe:value                     value loss or optimizer (constant reward, V = 1)
2      probe:discounting               reward discounting (V(first) = gamma)
3      probe:obs-value                 backprop through the network (V(obs) = obs)
4      probe:action                    advantage, policy loss or policy update
5      probe:obs-action                policy and value interacting; stale batches
6      probe:truncation                bootstrapping through time-limit truncation
7      probe:continuous-action         continuous policy head / deterministic or squashed actor
8      probe:continuous-obs-action     continuous policy conditioned on the observation
9      probe:delayed-reward            multi-step (n-step / lambda) credit assignment
10     probe:continuous-truncation     rung 6 for continuous-action learners
11     probe:memory                    a recurrent policy's memory (feed-forward ones must fail)
=====  ==============================  ==========================================================

Off the ladder, ``probe:masked-action`` checks that a learner honours an action mask.

Length: the ladder's probes are each a few lines and read best beside one another (the rung
before says what the next one adds), so they stay in one module.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.core import Environment
from envs.spaces import Box, Discrete


@struct.dataclass
class ProbeParams:
    """Probe env params. ``time_limit``: steps after which an episode is truncated."""

    time_limit: int = 1_000_000


@struct.dataclass
class ProbeState:
    obs: jax.Array  # [obs_dim] current observation
    time: jax.Array  # [] int32 steps taken in this episode


@dataclasses.dataclass(frozen=True)
class ProbeAnswer:
    """The exact answer of a probe for a discount ``gamma``.

    observations: ``[K, obs_dim]`` observations at which the agent is queried.
    values: ``[K]`` exact V(obs) under the optimal policy (``None`` if not checked).
    best_actions: ``[K]`` (discrete) or ``[K, act_dim]`` (continuous) optimal actions, or ``None``.
    wrong_values: ``[K]`` the value an agent converges to if it makes the mistake this probe is
        built to catch (only the truncation probe sets it), so tests can tell the two apart.
    """

    observations: np.ndarray
    values: np.ndarray | None
    best_actions: np.ndarray | None
    value_tolerance: float
    action_tolerance: float
    wrong_values: np.ndarray | None = None


class ProbeEnv(Environment):
    """Shared machinery: a probe is its observation sampler, reward, termination and answer."""

    name = "probe"
    rung = 0
    diagnosis = ""
    obs_dim = 1
    episode_steps = 1  # steps until termination (absorbing); 0 = never terminates
    needs_memory = False  # only a policy with memory (recurrent) can pass it

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))

    @property
    def default_params(self) -> ProbeParams:
        return ProbeParams()

    def observation_space(self, params=None) -> Box:
        return Box(-1.0, 1.0, (self.obs_dim,))

    def action_space(self, params=None):
        return Discrete(1)

    # -- per-probe pieces ---------------------------------------------------------------------
    def initial_obs(self, key: jax.Array) -> jax.Array:
        return jnp.zeros((self.obs_dim,), jnp.float32)

    def next_obs(self, state: ProbeState) -> jax.Array:
        """Observation after a non-terminal step (``state.time`` already incremented)."""
        return state.obs

    def reward(self, state: ProbeState, action: jax.Array) -> jax.Array:
        raise NotImplementedError

    def answer(self, gamma: float, params: ProbeParams | None = None) -> ProbeAnswer:
        raise NotImplementedError

    # -- protocol -----------------------------------------------------------------------------
    def reset_env(self, key, params):
        obs = self.initial_obs(key)
        return obs, ProbeState(obs=obs, time=jnp.zeros((), jnp.int32))

    def step_env(self, key, state, action, params):
        reward = self.reward(state, action)
        time = state.time + 1
        terminated = (time >= self.episode_steps) if self.episode_steps > 0 else jnp.array(False)
        truncated = time >= params.time_limit
        state = state.replace(time=time)
        obs = self.next_obs(state)
        state = state.replace(obs=obs)
        return obs, state, jnp.asarray(reward, jnp.float32), terminated, truncated, {}


def _sign_obs(key: jax.Array) -> jax.Array:
    """A random observation of +1 or -1, shape ``[1]``."""
    return jnp.where(jax.random.bernoulli(key), 1.0, -1.0)[None].astype(jnp.float32)


_PM1 = np.array([[-1.0], [1.0]], np.float32)


class ValueProbe(ProbeEnv):
    """Rung 1: one action, zero obs, one step, reward +1. V = 1."""

    name, rung = "probe:value", 1
    diagnosis = "value loss or optimizer: the value of a constant +1 reward was not learned"

    def reward(self, state, action):
        return 1.0

    def answer(self, gamma, params=None):
        return ProbeAnswer(np.zeros((1, 1), np.float32), np.ones(1), None, 0.05, 0.0)


class DiscountingProbe(ProbeEnv):
    """Rung 2: one action, two steps, +1 at the end. Obs is 0 on the first step, 1 on the second
    (the steps must be distinguishable for V to differ). V(0) = gamma, V(1) = 1."""

    name, rung = "probe:discounting", 2
    diagnosis = "reward discounting: rung 1 passes but V(first step) != gamma"
    episode_steps = 2

    def next_obs(self, state):
        return jnp.ones((1,), jnp.float32)

    def reward(self, state, action):
        return jnp.where(state.time == 1, 1.0, 0.0)

    def answer(self, gamma, params=None):
        obs = np.array([[0.0], [1.0]], np.float32)
        return ProbeAnswer(obs, np.array([gamma, 1.0]), None, 0.05, 0.0)


class ObsValueProbe(ProbeEnv):
    """Rung 3: one action, obs +-1 at random, one step, reward = obs. V(obs) = obs."""

    name, rung = "probe:obs-value", 3
    diagnosis = "backprop through the network: a constant value is learned but not an obs-dependent one"

    def initial_obs(self, key):
        return _sign_obs(key)

    def reward(self, state, action):
        return state.obs[0]

    def answer(self, gamma, params=None):
        return ProbeAnswer(_PM1, _PM1[:, 0].astype(np.float64), None, 0.05, 0.0)


class ActionProbe(ProbeEnv):
    """Rung 4: two actions, zero obs, one step, reward +1 for action 1 and -1 for action 0."""

    name, rung = "probe:action", 4
    diagnosis = "advantage estimate, policy loss or policy update: the better action is not preferred"

    def action_space(self, params=None):
        return Discrete(2)

    def reward(self, state, action):
        return jnp.where(action == 1, 1.0, -1.0)

    def answer(self, gamma, params=None):
        return ProbeAnswer(np.zeros((1, 1), np.float32), np.ones(1), np.array([1]), 0.1, 0.0)


class ObsActionProbe(ProbeEnv):
    """Rung 5: two actions, obs +-1, one step; reward +1 if the action matches the obs
    (action 1 for obs +1, action 0 for obs -1), else -1. Optimal V = 1 in both states."""

    name, rung = "probe:obs-action", 5
    diagnosis = ("policy and value interacting: right action per obs and V = 1 not both learned "
                 "(e.g. the value net is fed stale experience)")

    def action_space(self, params=None):
        return Discrete(2)

    def initial_obs(self, key):
        return _sign_obs(key)

    def reward(self, state, action):
        good = jnp.where(state.obs[0] > 0, 1, 0)
        return jnp.where(action == good, 1.0, -1.0)

    def answer(self, gamma, params=None):
        return ProbeAnswer(_PM1, np.ones(2), np.array([0, 1]), 0.1, 0.0)


class TruncationProbe(ProbeEnv):
    """Rung 6: one action, zero obs, reward +1 every step, never terminates, truncated after
    ``params.time_limit`` steps. Bootstrapping through truncation gives V = 1/(1-gamma); treating
    the time limit as termination gives (at best) (1-gamma^T)/(1-gamma) for the start state and
    less on average over the episode (the obs cannot tell the agent the time)."""

    name, rung = "probe:truncation", 6
    diagnosis = "time-limit handling: truncation is treated as termination (no bootstrap from the final obs)"
    episode_steps = 0

    @property
    def default_params(self) -> ProbeParams:
        return ProbeParams(time_limit=5)

    def reward(self, state, action):
        return 1.0

    def answer(self, gamma, params=None):
        time_limit = int((params or self.default_params).time_limit)
        right = 1.0 / (1.0 - gamma)
        wrong = (1.0 - gamma**time_limit) / (1.0 - gamma)
        return ProbeAnswer(
            np.zeros((1, 1), np.float32), np.array([right]), None, 0.05 * right, 0.0,
            wrong_values=np.array([wrong]),
        )


class ContinuousActionProbe(ProbeEnv):
    """Rung 7: continuous rung 4. Action in [-1, 1], zero obs, one step,
    reward = 1 - (a - 0.5)^2; best action 0.5, optimal V = 1."""

    name, rung = "probe:continuous-action", 7
    diagnosis = "continuous policy head or actor update: the best action (0.5) is not found"
    target = 0.5

    def action_space(self, params=None):
        return Box(-1.0, 1.0, (1,))

    def best_action(self, obs):
        return jnp.full((1,), self.target, jnp.float32)

    def reward(self, state, action):
        a = jnp.clip(jnp.reshape(action, (1,)), -1.0, 1.0)
        return 1.0 - jnp.sum((a - self.best_action(state.obs)) ** 2)

    def answer(self, gamma, params=None):
        obs = np.zeros((1, 1), np.float32)
        return ProbeAnswer(obs, np.ones(1), np.array([[self.target]], np.float32), 0.1, 0.1)


class ContinuousObsActionProbe(ContinuousActionProbe):
    """Rung 8: continuous rung 5. Obs +-1, best action 0.5 * obs, reward = 1 - (a - 0.5 obs)^2."""

    name, rung = "probe:continuous-obs-action", 8
    diagnosis = "continuous policy conditioned on the obs: the best action differs per observation"

    def initial_obs(self, key):
        return _sign_obs(key)

    def best_action(self, obs):
        return self.target * obs

    def answer(self, gamma, params=None):
        best = (self.target * _PM1).astype(np.float32)
        return ProbeAnswer(_PM1, np.ones(2), best, 0.1, 0.1)


class DelayedRewardProbe(ProbeEnv):
    """Rung 9: one action, ``length`` steps, obs one-hot of the step index, +1 only on the last
    step. V(step t) = gamma^(length-1-t): multi-step returns must carry the reward back."""

    name, rung = "probe:delayed-reward", 9
    diagnosis = "multi-step credit assignment (n-step / lambda-returns): a delayed reward is not propagated"
    length = 5
    obs_dim = length
    episode_steps = length

    def observation_space(self, params=None) -> Box:
        return Box(0.0, 1.0, (self.obs_dim,))

    def initial_obs(self, key):
        return jax.nn.one_hot(0, self.length, dtype=jnp.float32)

    def next_obs(self, state):
        return jax.nn.one_hot(jnp.minimum(state.time, self.length - 1), self.length, dtype=jnp.float32)

    def reward(self, state, action):
        return jnp.where(state.time == self.length - 1, 1.0, 0.0)

    def answer(self, gamma, params=None):
        obs = np.eye(self.length, dtype=np.float32)
        values = gamma ** (self.length - 1 - np.arange(self.length, dtype=np.float64))
        return ProbeAnswer(obs, values, None, 0.05, 0.0)


class ContinuousTruncationProbe(TruncationProbe):
    """Rung 10: rung 6 for continuous-action learners (DDPG, TD3, SAC). Action in [-1, 1]
    (ignored), reward +1 every step, truncated after ``time_limit`` steps. V = 1/(1-gamma)."""

    name, rung = "probe:continuous-truncation", 10

    def action_space(self, params=None):
        return Box(-1.0, 1.0, (1,))


@struct.dataclass
class MemoryState(ProbeState):
    sign: jax.Array  # [] +1 or -1: the first observation, hidden afterwards


class MemoryProbe(ProbeEnv):
    """Rung 11, for policies with memory (recurrent): two actions, ``length`` steps; the first
    obs is +-1, the later ones 0; the last step pays +1 if the action names the first obs (1 for
    +1, 0 for -1), else -1, and earlier steps pay 0. Optimal V(first obs) = gamma^(length-1) at
    both signs. A feed-forward policy sees 0 on the last step, so its expected final reward is
    0 whatever it does, and its values at the two signs sum to 0 (V(+1) = -V(-1))."""

    name, rung = "probe:memory", 11
    diagnosis = ("memory: the first observation is not carried to the last step (recurrent "
                 "state not reset, not stored with the segment, or minibatches cut sequences)")
    needs_memory = True
    length = 4
    episode_steps = length

    def action_space(self, params=None):
        return Discrete(2)

    def reset_env(self, key, params):
        obs = _sign_obs(key)
        return obs, MemoryState(obs=obs, time=jnp.zeros((), jnp.int32), sign=obs[0])

    def next_obs(self, state):
        return jnp.zeros((1,), jnp.float32)

    def reward(self, state, action):
        right = jnp.where(action == jnp.where(state.sign > 0, 1, 0), 1.0, -1.0)
        return jnp.where(state.time == self.length - 1, right, 0.0)

    def optimal_action(self, state: MemoryState) -> jax.Array:
        """The optimal policy's action, which remembers the first obs (for brute-force checks of
        the answer: no memoryless policy earns it)."""
        return jnp.where(state.sign > 0, 1, 0)

    def answer(self, gamma, params=None):
        return ProbeAnswer(_PM1, np.full(2, gamma ** (self.length - 1)), None, 0.1, 0.0)


class MaskedActionProbe(ProbeEnv):
    """Off the ladder (for the algorithms that honour action masks, `envs.spaces.Discrete`):
    three actions, two steps; the observation is ``[step, mask of 3]``, the mask allowing two
    of the three actions (pattern ``p``: all but action ``p``; the first step's is random, the
    second's ``p + 1 mod 3``). An allowed action ``a`` earns ``(0, 0.5, 1)[a]``, a forbidden one
    3: a learner that acts on forbidden actions scores more than the 2 a masked one can (so a
    training episode's return above 2 proves a mask was ignored), and one that bootstraps from
    a forbidden action values the first step too high. V(step 1, p) = best(p), V(step 0, p) =
    best(p) + gamma best(p + 1)."""

    name, rung = "probe:masked-action", 0
    diagnosis = ("action masks: a forbidden action is taken, preferred or bootstrapped from "
                 "(the greedy action, exploration or the target ignores the mask)")
    obs_dim = 4
    episode_steps = 2
    allowed_rewards = (0.0, 0.5, 1.0)
    forbidden_reward = 3.0

    def observation_space(self, params=None) -> Box:
        return Box(0.0, 1.0, (self.obs_dim,))

    def action_space(self, params=None):
        return Discrete(3, mask_size=3)

    @staticmethod
    def _obs(step, pattern) -> jax.Array:
        mask = 1.0 - jax.nn.one_hot(pattern, 3, dtype=jnp.float32)
        return jnp.concatenate([jnp.asarray(step, jnp.float32)[None], mask])

    def initial_obs(self, key):
        return self._obs(0, jax.random.randint(key, (), 0, 3))

    def next_obs(self, state):
        pattern = jnp.argmin(state.obs[1:])
        return self._obs(jnp.minimum(state.time, 1), (pattern + 1) % 3)

    def reward(self, state, action):
        allowed = state.obs[1:][action] > 0.5
        return jnp.where(allowed, jnp.asarray(self.allowed_rewards)[action],
                         self.forbidden_reward)

    def answer(self, gamma, params=None):
        best = np.array([1.0, 1.0, 0.5])  # pattern p forbids action p
        patterns = np.arange(3)
        masks = 1.0 - np.eye(3, dtype=np.float32)
        obs = np.concatenate([np.concatenate([np.full((3, 1), step, np.float32), masks], 1)
                              for step in (0, 1)])
        values = np.concatenate([best + gamma * best[(patterns + 1) % 3], best])
        actions = np.array([2, 2, 1, 2, 2, 1])
        return ProbeAnswer(obs, values.astype(np.float64), actions, 0.1, 0.0)


PROBES: tuple[type[ProbeEnv], ...] = (
    ValueProbe, DiscountingProbe, ObsValueProbe, ActionProbe, ObsActionProbe, TruncationProbe,
    ContinuousActionProbe, ContinuousObsActionProbe, DelayedRewardProbe, ContinuousTruncationProbe,
    MemoryProbe,
)
PROBES_BY_NAME = {p.name: p for p in (*PROBES, MaskedActionProbe)}


def make_probe(name: str, **param_overrides) -> tuple[ProbeEnv, ProbeParams]:
    """``make_probe("probe:truncation", time_limit=10)`` -> ``(env, params)``."""
    env = PROBES_BY_NAME[name]()
    params = env.default_params.replace(**param_overrides) if param_overrides else env.default_params
    return env, params
