"""Conv torsos: shapes, the im2col convolution against XLA's, `auto` resolution, bad shapes
named in one line, and one compile per observation shape."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrl
from jaxrl.config import ConfigError
from jaxrl.engine import programs
from jaxrl.parts.actor_critic import ActorCritic, Critic
from jaxrl.parts.q_networks import QNetwork
from jaxrl.parts.torsos import ConvTorso, conv2d_valid, resolve_torso


@pytest.mark.parametrize("n, side, c, k, stride, f", [(5, 10, 4, 3, 1, 16), (2, 84, 4, 8, 4, 32),
                                                      (3, 20, 32, 4, 2, 64), (2, 9, 64, 3, 1, 8)])
def test_im2col_conv_matches_xla(n, side, c, k, stride, f):
    x = jax.random.normal(jax.random.key(0), (n, side, side, c))
    w = jax.random.normal(jax.random.key(1), (k, k, c, f))
    ref = jax.lax.conv_general_dilated(x, w, (stride, stride), "VALID",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
    out = conv2d_valid(x, w, stride)
    assert out.shape == ref.shape
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("kind, shape, width, kernels", [
    ("minatar_cnn", (10, 10, 6), 128, [(3, 3, 6, 16)]),
    ("nature_cnn", (84, 84, 4), 512, [(8, 8, 4, 32), (4, 4, 32, 64), (3, 3, 64, 64)]),
    ("nature_cnn_small", (84, 84, 4), 128, [(8, 8, 4, 8), (4, 4, 8, 16)]),  # vel's, for TRPO
])
def test_conv_torso_shapes(kind, shape, width, kernels):
    flat = jnp.ones((7, 3, int(np.prod(shape))))  # any leading axes
    torso = ConvTorso(kind)
    # traced, not run: the shapes are the point (running the Nature CNN op by op took 9-15 s)
    params = jax.eval_shape(torso.init, jax.random.key(0), flat)["params"]
    assert jax.eval_shape(torso.apply, {"params": params}, flat).shape == (7, 3, width)
    assert [params[f"conv_{i}_kernel"].shape for i in range(len(kernels))] == kernels
    # VALID: 10-3+1; Nature's 84 -> 20 -> 9 -> 7; the small one's 84 -> 20 -> 9
    side_out = {"minatar_cnn": 8, "nature_cnn": 7, "nature_cnn_small": 9}[kind]
    assert params["Dense_0"]["kernel"].shape == (side_out * side_out * kernels[-1][-1], width)


def test_every_network_reads_images():
    obs = jnp.zeros((2, 10 * 10 * 4))
    from envs.spaces import Discrete
    ac = ActorCritic(Discrete(3), (64,), "relu", torso_kind="minatar_cnn")
    dist, value = ac.apply(ac.init(jax.random.key(0), obs), obs)
    assert dist.logits.shape == (2, 3) and value.shape == (2,)
    shared = ActorCritic(Discrete(3), (64,), "relu", shared=True, torso_kind="minatar_cnn")
    params = shared.init(jax.random.key(0), obs)["params"]
    assert set(params) == {"torso", "policy", "value_net"} and "ConvTorso_0" in str(params["torso"])
    q = QNetwork(3, (64,), dueling=True, torso="minatar_cnn")
    assert q.apply(q.init(jax.random.key(0), obs), obs).shape == (2, 3)
    critic = Critic((32,), torso="minatar_cnn")
    act = jnp.zeros((2, 2))
    assert critic.apply(critic.init(jax.random.key(0), obs, act), obs, act).shape == (2,)


def test_auto_resolves_by_shape_and_bad_shapes_are_named():
    assert resolve_torso("auto", (10, 10, 4)) == "minatar_cnn"
    assert resolve_torso("auto", (84, 84, 4)) == "nature_cnn"  # never the small one
    assert resolve_torso("nature_cnn_small", (84, 84, 4)) == "nature_cnn_small"
    assert resolve_torso("auto", (4,)) == "mlp"
    assert resolve_torso("mlp", (10, 10, 4)) == "mlp"
    with pytest.raises(ConfigError, match=r"reads \[84, 84, C\] observations; this env's are \[4\]"):
        resolve_torso("nature_cnn", (4,))
    with pytest.raises(ConfigError, match="unknown torso 'resnet'"):
        resolve_torso("resnet", (4,))
    with pytest.raises(ConfigError, match="reads"):
        jaxrl.train("ppo", env="CartPole-v1", total_steps=1024, store=False, progress=False,
                    torso="minatar_cnn")


def test_one_compile_per_shape():
    """The conv torso compiles once per observation shape: changing a traced hyperparameter
    reuses the program; the resolved torso is what the result's config records."""
    kw = dict(env="gymnax:Breakout-MinAtar", seeds=1, total_steps=64, store=False,
              progress=False, num_envs=4, num_steps=8, num_minibatches=2, update_epochs=1,
              eval_episodes=2)
    programs.forget()  # the first train must compile, whatever this worker ran before
    first = jaxrl.train("ppo", learning_rate=1e-3, **kw)
    second = jaxrl.train("ppo", learning_rate=3e-4, **kw)
    assert first.config.torso == "minatar_cnn"
    assert first.compile_seconds > 0 and second.compile_seconds == 0.0
    assert np.isfinite(first.metrics["policy_loss"]).all()


def test_memory_plan_counts_conv_activations():
    """Feature maps and im2col patches per sample: 8x8 positions x (16 outputs + 3*3*4 inputs)
    for minatar_cnn on 4 channels; the plan's working set grows by them."""
    from jaxrl.engine.spec import resolve
    from jaxrl.parts import memory
    from jaxrl.parts.torsos import conv_units

    assert conv_units("minatar_cnn", 4) == 8 * 8 * (16 + 9 * 4)
    assert conv_units("nature_cnn", 4) == (20 * 20 * (32 + 64 * 4) + 9 * 9 * (64 + 16 * 32)
                                           + 7 * 7 * (64 + 9 * 64))
    plans = {}
    for torso in ("mlp", "minatar_cnn"):
        a, env, params, config, _ = resolve("ppo", "gymnax:Breakout-MinAtar", 10**6, 1,
                                                   torso=torso, hidden=(8,))
        plans[torso] = memory.estimate(a, config, env, params, 1).transient_bytes
    assert plans["minatar_cnn"] > 3 * plans["mlp"]  # measured: 631 vs 161 MB
