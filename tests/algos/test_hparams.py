"""Typed hyperparameters: every config splits into a static view (what the jitted functions
close over, without the traced fields) and a typed pytree of traced values (``state.hparams``);
loss inputs are shape-checked; checkpoints written with dict hparams restore by name."""

import dataclasses
import warnings

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import envs
from jaxrl import algos
from jaxrl.algos import onpolicy, ppo
from jaxrl.config import AlgoConfig, Hparams, StaticConfig
from jaxrl.engine import programs
from jaxrl.engine.checkpoint import Checkpointer
from jaxrl.engine.members import Members
from jaxrl.engine.spec import resolve

ALGOS = sorted(algos.ALGORITHMS)


@pytest.mark.parametrize("algo", ALGOS)
def test_a_config_splits_into_its_static_view_and_its_hparams(algo):
    config = algos.get(algo).default_config("CartPole-v1")
    static, hp = config.static(), config.hparams()
    assert isinstance(config, AlgoConfig)
    assert type(static) is config.static_type() and isinstance(static, StaticConfig)
    assert type(hp) is config.hparams_type() and isinstance(hp, Hparams)
    traced = config.traced_names()
    static_names = [f.name for f in dataclasses.fields(static)]
    assert traced and not set(traced) & set(static_names)
    assert sorted(traced + static_names) == sorted(config.field_names())
    for name in traced:  # the static view cannot hand a traced value to a loss
        with pytest.raises(AttributeError):
            getattr(static, name)
        value = getattr(hp, name)
        assert value.dtype == jnp.float32 and value.shape == ()
        assert float(value) == np.float32(getattr(config, name))
    for name in static_names:
        assert getattr(static, name) == getattr(config, name)
    assert static.static() is static
    assert static.static_key()[1:] == config.static_key()[1:]


def test_traced_changes_keep_the_static_key_and_the_static_view():
    a = ppo.PPOConfig()
    b = a.replace(learning_rate=1e-3, gamma="0.9")
    assert b.static_key() == a.static_key() and b.static() == a.static()
    assert float(b.hparams().gamma) == np.float32(0.9)
    assert a.replace(num_envs=8).static_key() != a.static_key()


@pytest.mark.parametrize("algo,env", [("ppo", "CartPole-v1"), ("sac", "Pendulum-v1")])
def test_the_engine_hands_algorithms_the_static_view(algo, env):
    algorithm, wrapped, env_params, config, _ = resolve(algo, env, 100_000, 1)
    seen = []

    def train_step(state, static, env, env_params):
        seen.append(static)
        return algorithm.train_step(state, static, env, env_params)

    spy = dataclasses.replace(algorithm, train_step=train_step)
    state = jax.eval_shape(lambda k: algorithm.init(k, wrapped, env_params, config),
                           jax.random.key(0))
    batched = jax.tree.map(lambda x: jax.ShapeDtypeStruct((1, *x.shape), x.dtype), state)
    jax.eval_shape(programs.chunk_program(spy, config, wrapped, env_params, 1, 1)(), batched)
    assert seen and all(type(s) is config.static_type() for s in seen)
    assert isinstance(state.hparams, config.hparams_type())


def test_a_loss_refuses_a_misshaped_batch():
    env, env_params = envs.make("CartPole-v1")
    config = ppo.PPOConfig(num_envs=2, num_steps=8, num_minibatches=2)
    network = onpolicy.make_network(config.static(), env, env_params)
    params = network.init(jax.random.key(0), jnp.zeros((1, 4)))
    b = 16
    batch = onpolicy.Batch(jnp.zeros((b, 4)), jnp.zeros((b,), jnp.int32), jnp.zeros((b,)),
                           jnp.zeros((b,)), jnp.zeros((b,)), jnp.zeros((b,)))
    loss, _ = ppo.ppo_loss(params, network, batch, config.hparams(), config.static())
    assert np.isfinite(float(loss))
    with pytest.raises(AssertionError):  # advantages [B, 1] would broadcast silently
        ppo.ppo_loss(params, network, batch.replace(advantage=jnp.zeros((b, 1))),
                     config.hparams(), config.static())


@struct.dataclass
class _Old:
    hparams: dict
    opt_state: dict


@struct.dataclass(frozen=True)
class _Hp:
    gamma: jax.Array
    adam_eps: jax.Array
    clip_eps: jax.Array


@struct.dataclass
class _New:
    hparams: _Hp
    opt_state: onpolicy.ParamGroups


def test_a_checkpoint_of_dict_hparams_restores_each_value_by_name(tmp_path):
    """Before typed hparams the state held a dict (leaves in sorted key order); the dataclass
    declares its fields in another order: each value must come back under its own name."""
    old = _Old({"gamma": jnp.float32(0.99), "adam_eps": jnp.float32(1e-5),
                "clip_eps": jnp.float32(0.2)}, {"all": (jnp.arange(3.0),)})
    with Checkpointer(tmp_path, async_save=False) as ckpt:
        ckpt.save(1, old, {})
    like = _New(_Hp(*(jax.ShapeDtypeStruct((), jnp.float32),) * 3),
                onpolicy.ParamGroups(all=(jax.ShapeDtypeStruct((3,), jnp.float32),)))
    with Checkpointer(tmp_path) as ckpt, warnings.catch_warnings():
        warnings.simplefilter("error")
        _, got, _ = ckpt.restore_latest(like)
    assert isinstance(got, _New)
    chex.assert_trees_all_equal(got.hparams, _Hp(jnp.float32(0.99), jnp.float32(1e-5),
                                                 jnp.float32(0.2)))
    np.testing.assert_array_equal(got.opt_state.all[0], np.arange(3.0))


def test_each_member_starts_from_its_own_traced_values():
    """The configs of a group share one init program (and a later run with other traced values
    reuses it from the cache): SAC's initial temperature must come from each member's own
    config, not from the config the program was built with."""
    algorithm, wrapped, env_params, config, _ = resolve("sac", "Pendulum-v1", 100_000, 1,
                                                        hidden=(8,), buffer_size=64)
    members = Members((config, config.replace(init_alpha=0.2)), seeds=2)
    init_all = programs.init_program(algorithm, config, wrapped, env_params, members.size)()
    state = jax.jit(init_all)(members.keys(), members.hparams())
    np.testing.assert_allclose(np.exp(state.params.log_alpha), [1.0, 1.0, 0.2, 0.2], rtol=1e-6)
    np.testing.assert_allclose(state.hparams.init_alpha, [1.0, 1.0, 0.2, 0.2], rtol=1e-6)
