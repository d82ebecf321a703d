"""Acting with an off-policy agent outside training (`exploring_policy`)."""

from __future__ import annotations

import dataclasses

from jaxrl.algos import acting
from jaxrl.algos.offpolicy.state import OffPolicyState
from jaxrl.parts.rollout import flatten_obs


def exploring_policy(mode: acting.Mode, value: acting.Value, explore, static, env, env_params
                     ) -> acting.Policy:
    """The memoryless `acting.Policy` of an off-policy algorithm: its deterministic action
    ``mode(state, obs)`` and its ``value``, or with ``deterministic=False`` the action
    ``explore`` takes in training (epsilon-greedy, Gaussian noise, a policy sample) at raw env
    observations."""
    obs_space, space = env.observation_space(env_params), env.action_space(env_params)

    def sample(state, obs, key):
        # outside training (evaluation, demonstrations) noise is drawn afresh: the OU
        # processes of action_noise="ou" belong to the training envs
        fresh = dataclasses.replace(state, noise=None) if isinstance(
            state, OffPolicyState) else state
        return explore(fresh, flatten_obs(obs, obs_space), key, static, space)

    return acting.feed_forward(mode, sample, value, space)
