"""PQN, C51 and QR-DQN through the engine: one compile per shape (a traced hyperparameter
changed reuses the program), and seeds vmapped in one program train exactly as each seed run
alone (the fused ``make_train`` program, unbatched, at that seed's key)."""

import jax
import numpy as np
import pytest

import jaxrl
from jaxrl.engine import programs
from jaxrl.engine.members import seed_keys

_REPLAY = dict(num_envs=2, log_interval=8, buffer_size=128, batch_size=16, learning_starts=16,
               hidden=(16,), prioritized=True, n_step=3)
CASES = {
    "pqn": (dict(num_envs=4, num_steps=8, update_epochs=2, num_minibatches=2, hidden=(16,)),
            32 * 6),
    "c51": (dict(_REPLAY, num_atoms=11), 16 * 6),
    "qrdqn": (dict(_REPLAY, num_quantiles=8), 16 * 6),
    "iqn": (dict(_REPLAY, num_quantiles=8, num_target_quantiles=8, num_action_quantiles=4,
                 embedding_dim=8, anneal_lr=False), 16 * 3),  # its classic defaults anneal
}

# IQN's quantiles are products of two branches (the torso's features and tau's embedding): the
# batched matrix products of the vmapped seeds, summed in another order, move its losses by
# 1e-6 at first and its parameters by 5e-4 after 6 updates (Adam's step is as large for a
# near-zero gradient whose sign the noise flips); over 3 updates they stay within 1e-3, and keys
# gone astray would differ at order 1
RTOL = {"iqn": 1e-3}


@pytest.mark.parametrize("algo", sorted(CASES))
def test_one_compile_per_shape_and_vmapped_seeds_equal_seed_by_seed(algo):
    config, steps = CASES[algo]
    programs.forget()  # another test in this worker may have built the first program
    kw = dict(env="CartPole-v1", total_steps=steps, store=False, progress=False,
              eval_episodes=0, seed=11, **config)
    first = jaxrl.train(algo, seeds=3, learning_rate=1e-3, **kw)
    second = jaxrl.train(algo, seeds=3, learning_rate=3e-3, gamma=0.9, **kw)
    assert first.compile_seconds > 0 and second.compile_seconds == 0.0
    # the new value is used (PQN anneals it from there; C51 and QR-DQN report 0 while warming)
    assert second.metrics.learning_rate.max() == pytest.approx(3e-3)
    assert np.isfinite(first.metrics["loss"]).all()

    fused = jax.jit(jaxrl.make_train(algo, "CartPole-v1", steps, learning_rate=1e-3, **config))
    for seed, key in enumerate(seed_keys(11, 3)):
        alone, _ = fused(key)
        for a, b in zip(jax.tree.leaves(alone.params), jax.tree.leaves(first.state.params),
                        strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b)[seed],
                                       rtol=RTOL.get(algo, 1e-5), atol=1e-6)
