"""Registry names and errors: the closest names suggested, probes suggested for probe names, every
env family made by name."""

import pytest

import envs


def test_unknown_name_lists_closest():
    with pytest.raises(envs.UnknownEnvironmentError) as err:
        envs.make("CartPol-v1")
    msg = str(err.value)
    assert "CartPol-v1" in msg and "CartPole-v1" in msg and "\n" not in msg


def test_unknown_probe_suggests_probe():
    with pytest.raises(envs.UnknownEnvironmentError, match="probe:truncation"):
        envs.make("probe:truncaton")


def test_make_families():
    env, params = envs.make("probe:value")
    assert isinstance(env, envs.ProbeEnv)
    for name in ("CartPole-v1", "gymnax:CartPole-v1"):
        env, params = envs.make(name)
        assert isinstance(env.action_space(params), envs.Discrete)
    assert "brax:hopper" in envs.registered_names()
