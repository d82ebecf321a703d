"""A2C: the two RMSProp epsilon conventions (TensorFlow's and PyTorch's), the Adam option and the
shared-torso network."""

import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxrl
from jaxrl.algos import a2c


@pytest.mark.parametrize("style, expected", [
    # TF1: accumulator starts at 1, epsilon inside the square root.
    ("tensorflow", lambda g, v: g / np.sqrt(v + 1e-2)),
    # PyTorch: accumulator starts at 0, epsilon outside.
    ("pytorch", lambda g, v: g / (np.sqrt(v) + 1e-2)),
])
def test_rmsprop_epsilon_conventions(style, expected):
    config = a2c.A2CConfig(rmsprop_style=style, max_grad_norm=1e9)
    hp = config.replace(rmsprop_eps=1e-2, learning_rate=1.0).hparams()
    tx = a2c.optimizers(hp, config.static(), jnp.float32(1.0)).all
    params = {"w": jnp.zeros(3)}
    opt_state = tx.init(params)
    v = 1.0 if style == "tensorflow" else 0.0
    for g in (np.array([0.1, -2.0, 0.0]), np.array([0.5, 0.5, 3.0])):
        updates, opt_state = tx.update({"w": jnp.asarray(g, jnp.float32)}, opt_state, params)
        v = 0.99 * v + 0.01 * g**2
        np.testing.assert_allclose(np.asarray(updates["w"]), -expected(g, v), rtol=1e-5,
                                   atol=1e-7)


def test_a2c_adam_option_and_shared_network():
    result = jaxrl.train("a2c", env="CartPole-v1", seeds=2, total_steps=16 * 5 * 8,
                         progress=False, store=False, optimizer="adam", shared_network=True)
    tree = result.state.params["params"]
    assert set(tree) == {"torso", "policy", "value_net"}
    assert isinstance(result.state.opt_state.all[1], optax.ScaleByAdamState)
    assert np.isfinite(result.metrics.policy_loss).all()
