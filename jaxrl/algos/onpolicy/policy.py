"""Acting with a trained on-policy agent: actions, values and the recurrent policy's memory."""

from __future__ import annotations

from jaxrl.algos import acting
from jaxrl.algos.acting import PolicyState, PolicyStatic
from jaxrl.algos.onpolicy.batch import value_of_head
from jaxrl.algos.onpolicy.collect import normalize_obs, recurrent_step
from jaxrl.algos.onpolicy.state import initial_memory, make_network
from jaxrl.networks import to_env_action
from jaxrl.rollout import flatten_obs


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
