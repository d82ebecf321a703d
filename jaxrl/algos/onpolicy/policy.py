"""Acting with an on-policy agent (`make_policy`): the policy's mode or sample, the value net's
estimate and, for a recurrent policy, its memory from step to step."""

from __future__ import annotations

from jaxrl.algos import acting
from jaxrl.algos.acting import PolicyState, PolicyStatic
from jaxrl.algos.obs_normalization import normalize_obs
from jaxrl.algos.onpolicy.batch import value_of_head
from jaxrl.algos.onpolicy.collect import recurrent_step
from jaxrl.algos.onpolicy.state import initial_memory, make_network
from jaxrl.parts.actions import to_env_action
from jaxrl.parts.rollout import flatten_obs


def make_policy(static: PolicyStatic, env, env_params) -> acting.Policy:
    """The agent's `acting.Policy` at raw env observations, normalized with the agent's
    statistics as in training: the distribution's mode or a sample of it, and the value head
    (denormalized under PopArt). A recurrent policy carries its memory from step to step; its
    ``mode`` and ``value`` read one step from a fresh memory."""
    network = make_network(static, env, env_params)
    obs_space, action_space = env.observation_space(env_params), env.action_space(env_params)
    normalized = lambda state, obs: normalize_obs(state, flatten_obs(obs, obs_space), static)

    def dist(state: PolicyState, obs):
        return network.apply(state.params, normalized(state, obs), method=network.dist)

    def mode(state: PolicyState, obs):
        return dist(state, obs).mode()

    def sample(state: PolicyState, obs, key):
        return dist(state, obs).sample(key)

    def value(state: PolicyState, obs):
        head = network.apply(state.params, normalized(state, obs), method=network.value)
        return value_of_head(state, head, static)

    if not static.recurrent:
        return acting.feed_forward(mode, sample, value, action_space)

    def step(state: PolicyState, memory, obs, key, deterministic: bool = True):
        memory, dist, _ = recurrent_step(network, state.params, memory, normalized(state, obs))
        action = dist.mode() if deterministic else dist.sample(key)
        return memory, to_env_action(action_space, action)

    return acting.Policy(lambda n: initial_memory(static, network, n), step, mode, value,
                         recurrent=True)
