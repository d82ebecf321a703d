"""Q-network variants: LayerNorm before every activation (PQN's), in the MLP and the conv
torsos, and the distributional head (C51's logits, QR-DQN's quantiles), plain and dueling."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.parts.q_networks import DistributionalQNetwork, QNetwork
from jaxrl.parts.torsos import ConvTorso


def test_layer_norm_sits_before_every_hidden_activation():
    obs = jax.random.normal(jax.random.key(0), (6, 4)) * 50.0
    net = QNetwork(3, (8, 8), "relu", layer_norm=True)
    variables = net.init(jax.random.key(1), obs)
    mlp = variables["params"]["MLP_0"]
    assert sorted(mlp) == ["Dense_0", "Dense_1", "Dense_2", "LayerNorm_0", "LayerNorm_1"]
    _, seen = net.apply(variables, obs, capture_intermediates=True)
    normed = seen["intermediates"]["MLP_0"]["LayerNorm_0"]["__call__"][0]  # [6, 8]
    np.testing.assert_allclose(normed.mean(axis=-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(normed.std(axis=-1), 1.0, atol=1e-3)
    plain = QNetwork(3, (8, 8), "relu").init(jax.random.key(1), obs)["params"]["MLP_0"]
    assert sorted(plain) == ["Dense_0", "Dense_1", "Dense_2"]  # off: the tree is unchanged


def test_conv_torso_layer_norm_normalizes_channels_and_units():
    flat = jnp.ones((2, 10 * 10 * 4))
    params = jax.eval_shape(ConvTorso("minatar_cnn", layer_norm=True).init, jax.random.key(0),
                            flat)["params"]
    assert params["LayerNorm_0"]["scale"].shape == (16,)  # the conv's channels
    assert params["LayerNorm_1"]["scale"].shape == (128,)  # the dense layer's units
    assert "LayerNorm_0" not in jax.eval_shape(ConvTorso("minatar_cnn").init,
                                               jax.random.key(0), flat)["params"]


def test_distributional_head_shapes_and_dueling():
    obs = jax.random.normal(jax.random.key(0), (5, 4))
    net = DistributionalQNetwork(3, 7, (16,), "relu")
    assert net.apply(net.init(jax.random.key(1), obs), obs).shape == (5, 3, 7)
    duel = DistributionalQNetwork(3, 7, (16,), "relu", dueling=True)
    variables = duel.init(jax.random.key(1), obs)
    out, seen = duel.apply(variables, obs, capture_intermediates=True)
    assert out.shape == (5, 3, 7)
    value = seen["intermediates"]["Dense_0"]["__call__"][0]  # [5, 7]: one stream per output
    np.testing.assert_allclose(out.mean(axis=1), value, rtol=1e-5, atol=1e-6)
