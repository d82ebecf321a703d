"""Orthogonal init without LAPACK: same Q as a sign-fixed QR, and no custom call in any
algorithm's (seed-vmapped) init program — a batched LAPACK QR there deadlocked XLA's CPU pool."""

import jax
import numpy as np
import pytest

from jaxrl.engine.spec import resolve
from jaxrl.ops.init import orthogonal, orthonormal_columns


@pytest.mark.parametrize("shape", [(7, 3), (3, 7), (64, 64), (2, 5, 4)])
def test_orthogonal_rows_or_columns(shape):
    w = np.asarray(orthogonal(2.0)(jax.random.key(0), shape)).reshape(-1, shape[-1])
    gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-4)


def test_gram_schmidt_is_the_sign_fixed_qr():
    a = jax.random.normal(jax.random.key(1), (32, 16))
    q, r = np.linalg.qr(np.asarray(a, dtype=np.float64))
    q = q * np.sign(np.diag(r))
    np.testing.assert_allclose(np.asarray(orthonormal_columns(a)), q, atol=1e-4)


@pytest.mark.parametrize("algo,env,extra", [
    ("ppo", "CartPole-v1", {}), ("ppo", "Pendulum-v1", {}), ("trpo", "CartPole-v1", {}),
    ("dqn", "CartPole-v1", {}), ("sac", "Pendulum-v1", {}), ("td3", "Pendulum-v1", {}),
    ("acer", "CartPole-v1", {}),
    # the recurrent cores' recurrent kernels: flax's default init is LAPACK's QR; batched over
    # 8 seeds it deadlocked XLA:CPU's pool (an 8-seed LSTM run never finished its init)
    ("ppo", "CartPole-v1", {"rnn": "lstm"}), ("a2c", "CartPole-v1", {"rnn": "gru"})])
def test_vmapped_init_has_no_custom_calls(algo, env, extra):
    algorithm, wrapped, env_params, config, _ = resolve(algo, env, 100_000, 4, **extra)
    init = jax.vmap(lambda k: algorithm.init(k, wrapped, env_params, config))
    text = jax.jit(init).lower(jax.random.split(jax.random.key(0), 4)).as_text()
    assert "custom_call" not in text, [ln for ln in text.splitlines() if "custom_call" in ln][:3]
