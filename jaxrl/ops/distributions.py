"""Small, pure action distributions registered as pytrees (usable inside jit/vmap/scan).

Shapes: ``...`` is any batch shape (e.g. ``[B]`` or ``[T, B]``); the last axis of the
parameters is the action dimension (``n`` categories or ``d`` continuous dimensions).
Log-probabilities and entropies of multi-dimensional actions are summed over the last axis.
Parameters are used as given: clamp ``log_std`` in the network head if needed.
"""

from __future__ import annotations

import math

import chex
import flax.struct
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["Categorical", "DiagGaussian", "TanhGaussian", "masked", "uniform_choice"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_2 = math.log(2.0)


def masked(dist: Categorical, allowed: jax.Array) -> Categorical:
    """``dist`` with the classes where ``allowed [..., n]`` is 0 masked out (logit ``-inf``)."""
    return Categorical(logits=jnp.where(allowed > 0.5, dist.logits, -jnp.inf))


def uniform_choice(key: jax.Array, n: int, shape: tuple[int, ...],
                   allowed: jax.Array | None = None) -> jax.Array:
    """``shape`` int32 classes drawn uniformly from ``0 .. n-1``, or from those ``allowed [*shape,
    n]`` allows (each must allow one: `envs.spaces.Discrete.allowed` sees to it)."""
    if allowed is None:
        return jax.random.randint(key, shape, 0, n, dtype=jnp.int32)
    return masked(Categorical(jnp.zeros(allowed.shape)), allowed).sample(key)


@flax.struct.dataclass
class Categorical:
    """Categorical distribution over ``n`` classes.

    Attributes:
        logits: ``[..., n]`` unnormalized log-probabilities; ``-inf`` masks a class out.
    """

    logits: jax.Array

    @property
    def log_probs(self) -> jax.Array:
        """``[..., n]`` normalized log-probabilities."""
        return jax.nn.log_softmax(self.logits, axis=-1)

    @property
    def probs(self) -> jax.Array:
        """``[..., n]`` probabilities."""
        return jax.nn.softmax(self.logits, axis=-1)

    @property
    def max_entropy(self) -> float:
        """``log n``, the entropy of the uniform distribution (static Python float)."""
        return math.log(self.logits.shape[-1])

    def sample(self, key: jax.Array) -> jax.Array:
        """``[...]`` int32 class indices."""
        return jax.random.categorical(key, self.logits, axis=-1).astype(jnp.int32)

    def log_prob(self, actions: ArrayLike) -> jax.Array:
        """``[...]`` log-probability of integer ``actions`` of shape ``[...]``."""
        actions = jnp.asarray(actions).astype(jnp.int32)
        chex.assert_rank(actions, self.logits.ndim - 1)
        picked = jnp.take_along_axis(self.log_probs, actions[..., None], axis=-1)
        return picked[..., 0]

    def sample_and_log_prob(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(actions [...], log_prob [...])``."""
        actions = self.sample(key)
        return actions, self.log_prob(actions)

    def entropy(self) -> jax.Array:
        """``[...]`` entropy ``-sum_i p_i log p_i`` (masked classes contribute 0)."""
        log_p = self.log_probs
        p = jnp.exp(log_p)
        return -jnp.sum(p * _where_positive(p, log_p), axis=-1)

    def mode(self) -> jax.Array:
        """``[...]`` int32 most likely class."""
        return jnp.argmax(self.logits, axis=-1).astype(jnp.int32)

    def kl(self, other: Categorical) -> jax.Array:
        """``[...]`` ``KL(self || other) = sum_i p_i (log p_i - log q_i)``.

        Classes with ``p_i = 0`` contribute 0; a class with ``p_i > 0 = q_i`` gives ``inf``.
        """
        chex.assert_axis_dimension(other.logits, -1, self.logits.shape[-1])
        log_p = self.log_probs
        p = jnp.exp(log_p)
        return jnp.sum(p * _where_positive(p, log_p - other.log_probs), axis=-1)


def _where_positive(p: jax.Array, x: jax.Array) -> jax.Array:
    """``x`` where ``p > 0``, else 0: drops ``0 * inf`` terms without NaN values or gradients."""
    return jnp.where(p > 0, x, 0.0)


@flax.struct.dataclass
class DiagGaussian:
    """Gaussian with diagonal covariance.

    Attributes:
        mean: ``[..., d]``.
        log_std: ``[..., d]`` (or broadcastable to ``mean``, e.g. a state-independent ``[d]``).
    """

    mean: jax.Array
    log_std: jax.Array

    @property
    def std(self) -> jax.Array:
        """``[..., d]`` standard deviation."""
        return jnp.exp(self.log_std)

    @property
    def _dim(self) -> int:
        """``d``, the action dimension (the last axis of ``mean`` and ``log_std`` broadcast)."""
        return jnp.broadcast_shapes(jnp.shape(self.mean), jnp.shape(self.log_std))[-1]

    def sample(self, key: jax.Array) -> jax.Array:
        """``[..., d]`` sample ``mean + std * eps``, ``eps ~ N(0, I)`` (reparameterized)."""
        shape = jnp.broadcast_shapes(jnp.shape(self.mean), jnp.shape(self.log_std))
        noise = jax.random.normal(key, shape, dtype=jnp.result_type(self.mean))
        return self.mean + self.std * noise

    def log_prob(self, actions: ArrayLike) -> jax.Array:
        """``[...]`` log-density of ``actions [..., d]``, summed over the last axis."""
        actions = jnp.asarray(actions)
        chex.assert_axis_dimension(actions, -1, self._dim)
        z = (actions - self.mean) / self.std
        log_prob = jnp.sum(-0.5 * jnp.square(z) - self.log_std - _HALF_LOG_2PI, axis=-1)
        chex.assert_shape(log_prob, z.shape[:-1])
        return log_prob

    def sample_and_log_prob(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(actions [..., d], log_prob [...])``."""
        actions = self.sample(key)
        return actions, self.log_prob(actions)

    def entropy(self) -> jax.Array:
        """``[...]`` differential entropy ``sum_d (log_std + 0.5 * log(2 pi e))``."""
        log_std = jnp.broadcast_to(
            self.log_std, jnp.broadcast_shapes(jnp.shape(self.mean), jnp.shape(self.log_std))
        )
        return jnp.sum(log_std + 0.5 + _HALF_LOG_2PI, axis=-1)

    def mode(self) -> jax.Array:
        """``[..., d]`` the mean."""
        return jnp.broadcast_to(
            self.mean, jnp.broadcast_shapes(jnp.shape(self.mean), jnp.shape(self.log_std))
        )

    def kl(self, other: DiagGaussian) -> jax.Array:
        """``[...]`` closed-form ``KL(self || other)``, summed over the last axis."""
        chex.assert_equal(other._dim, self._dim)
        var_ratio = jnp.exp(2.0 * (self.log_std - other.log_std))
        mean_term = jnp.square((self.mean - other.mean) / other.std)
        return jnp.sum(
            0.5 * (var_ratio + mean_term - 1.0) - (self.log_std - other.log_std), axis=-1
        )


@flax.struct.dataclass
class TanhGaussian:
    """Squashed Gaussian: ``u ~ N(mean, std^2)``, action ``a = tanh(u)`` in ``(-1, 1)^d``.

    ``log p(a) = log N(u) - sum_d log(1 - tanh(u)^2)``, where the correction is computed stably
    as ``2 * (log 2 - u - softplus(-2 u))``. The entropy has no closed form: use
    :meth:`entropy_estimate`.

    Attributes:
        mean: ``[..., d]`` mean of the pre-squash Gaussian.
        log_std: ``[..., d]`` (or broadcastable) log std of the pre-squash Gaussian.
    """

    mean: jax.Array
    log_std: jax.Array

    #: Actions given to :meth:`log_prob` are clipped to ``[-1 + eps, 1 - eps]`` before atanh.
    atanh_clip_eps = 1e-6

    @property
    def base(self) -> DiagGaussian:
        """The pre-squash :class:`DiagGaussian`."""
        return DiagGaussian(self.mean, self.log_std)

    @staticmethod
    def _log_det_jacobian(u: jax.Array) -> jax.Array:
        """``[...]`` ``sum_d log(1 - tanh(u)^2)`` computed stably."""
        return jnp.sum(2.0 * (_LOG_2 - u - jax.nn.softplus(-2.0 * u)), axis=-1)

    def sample(self, key: jax.Array) -> jax.Array:
        """``[..., d]`` action ``tanh(u)`` (reparameterized)."""
        return jnp.tanh(self.base.sample(key))

    def sample_and_log_prob(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``(actions [..., d], log_prob [...])``, the log-prob computed from ``u`` (no atanh)."""
        u = self.base.sample(key)
        return jnp.tanh(u), self.base.log_prob(u) - self._log_det_jacobian(u)

    def log_prob(self, actions: ArrayLike) -> jax.Array:
        """``[...]`` log-density of given ``actions [..., d]`` in ``[-1, 1]^d``.

        Actions are clipped to ``[-1 + 1e-6, 1 - 1e-6]`` before ``atanh`` so boundary actions
        give large but finite values. Prefer :meth:`sample_and_log_prob` for fresh samples.
        """
        bound = 1.0 - self.atanh_clip_eps
        u = jnp.arctanh(jnp.clip(jnp.asarray(actions), -bound, bound))
        return self.base.log_prob(u) - self._log_det_jacobian(u)

    def entropy(self) -> jax.Array:
        """Not available in closed form; raises. Use :meth:`entropy_estimate`."""
        raise NotImplementedError(
            "TanhGaussian has no closed-form entropy; use entropy_estimate(key)."
        )

    def entropy_estimate(self, key: jax.Array) -> jax.Array:
        """``[...]`` single-sample unbiased entropy estimate ``-log p(a)``, ``a ~ self``."""
        return -self.sample_and_log_prob(key)[1]

    def mode(self) -> jax.Array:
        """``[..., d]`` deterministic action ``tanh(mean)``."""
        return jnp.tanh(self.base.mode())
