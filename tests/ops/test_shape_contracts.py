"""The ops check the shapes their docstrings promise (chex asserts at trace time): a mismatched
argument fails at the boundary, naming the shapes, instead of broadcasting into a wrong answer."""

import chex
import jax
import jax.numpy as jnp
import pytest

from jaxrl.ops import (
    Categorical,
    DiagGaussian,
    conjugate_gradient,
    gae,
    lambda_returns,
    linear_schedule,
    n_step_targets,
    normalize,
    polyak_update,
    running_stats_init,
)

T, B = 5, 3
ROLLOUT = jnp.zeros((T, B))


@pytest.mark.parametrize("call", [
    # a [T] value column against [T, B] rewards would broadcast silently
    lambda: gae(ROLLOUT, jnp.zeros((T, 1)), ROLLOUT, ROLLOUT, ROLLOUT, 0.99, 0.95),
    lambda: gae(ROLLOUT, ROLLOUT, ROLLOUT, ROLLOUT, ROLLOUT, jnp.full((B,), 0.99), 0.95),
    lambda: lambda_returns(ROLLOUT, ROLLOUT, jnp.zeros((T + 1, B)), ROLLOUT, 0.99, 0.95),
    lambda: n_step_targets(ROLLOUT, ROLLOUT.T, ROLLOUT, ROLLOUT, 0.99, 3),
    lambda: normalize(running_stats_init(4), jnp.zeros((8, 3))),
    lambda: polyak_update({"w": jnp.zeros(3)}, {"w": jnp.zeros(4)}, 0.5),
    lambda: linear_schedule(jnp.ones(2), 0.0, 1, 10.0),
    lambda: conjugate_gradient(lambda v: jnp.concatenate([v, v]), jnp.ones(3), 2),
    lambda: Categorical(jnp.zeros((B, 4))).log_prob(jnp.zeros((B, 1), jnp.int32)),
    lambda: DiagGaussian(jnp.zeros((B, 2)), jnp.zeros(2)).log_prob(jnp.zeros((B, 3))),
    lambda: DiagGaussian(jnp.zeros(2), jnp.zeros(2)).kl(DiagGaussian(jnp.zeros(3), jnp.zeros(3))),
])
def test_a_mismatched_shape_fails_at_the_boundary(call):
    with pytest.raises(AssertionError, match="Chex"):
        call()


def test_the_checks_run_under_jit_at_trace_time():
    bad = jax.jit(lambda v: gae(ROLLOUT, v, ROLLOUT, ROLLOUT, ROLLOUT, 0.99, 0.95))
    with pytest.raises(AssertionError, match="Chex"):
        bad.trace(jnp.zeros((T, 1)))
    chex.assert_shape(jax.jit(lambda v: gae(ROLLOUT, v, ROLLOUT, ROLLOUT, ROLLOUT, 0.99, 0.95))(
        ROLLOUT), (T, B))
