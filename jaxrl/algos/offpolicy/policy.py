"""Acting with a trained off-policy agent outside training."""

from __future__ import annotations

import dataclasses

from jaxrl.algos import acting
from jaxrl.algos.offpolicy.state import OffPolicyState
from jaxrl.rollout import flatten_obs


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
