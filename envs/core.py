"""The env protocol every environment in jaxrl speaks (gymnax-1.0 style, functional, vmappable).

    obs, state = env.reset(key, params)
    obs, state, reward, terminated, truncated, info = env.step(key, state, action, params)

* ``terminated``: the episode reached an absorbing state; do **not** bootstrap.
* ``truncated``: the episode was cut by a time limit; **do** bootstrap from
  ``info["final_observation"]``.
* Both may be true on the same step (then ``terminated`` wins for bootstrapping).
* ``step`` auto-resets: when the episode ends the returned ``obs`` is the first observation of
  the next episode and ``info["final_observation"]`` is the last observation of the episode that
  just ended. On every other step ``info["final_observation"]`` equals ``obs``.
* ``params`` is a pytree (a ``flax.struct`` dataclass), so it can be vmapped.

Environments written for jaxrl subclass `Environment` and implement ``reset_env`` / ``step_env``
(no auto-reset, no time limit handling beyond returning ``truncated``); the base class adds
auto-reset and ``final_observation``. Adapters for other libraries implement ``reset``/``step``
directly.

A program that keeps only each env's first episode (evaluation) traces its steps under
`first_episode_only`: there `Environment.step` (and Craftax's) leaves the reset out and
`envs.starts.PreparedStarts` draws no next start, so the program computes the env's reset once;
an env that has ended steps on from its last state, and what it returns after its episode's
end means nothing. Adapters whose library resets inside its own step (gymnax, Atari) step as
ever.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp

from envs.spaces import Space

StepResult = tuple[jax.Array, Any, jax.Array, jax.Array, jax.Array, dict]

# set while a program that keeps only each env's first episode is traced (`first_episode_only`)
_FIRST_EPISODE_ONLY = contextvars.ContextVar("first_episode_only", default=False)


@contextlib.contextmanager
def first_episode_only() -> Iterator[None]:
    """Trace env steps without their auto-reset (module docstring): for a program that reads
    nothing of an env after its first episode ends. Per thread (a context variable)."""
    token = _FIRST_EPISODE_ONLY.set(True)
    try:
        yield
    finally:
        _FIRST_EPISODE_ONLY.reset(token)


def resets_on_step() -> bool:
    """Whether a step traced now auto-resets (False under `first_episode_only`)."""
    return not _FIRST_EPISODE_ONLY.get()


class EqualByConstruction:
    """Mixin for adapters built by a factory: two built with the same arguments (``_make_args``,
    set by the factory) are equal and hash alike, so programs compiled for one are reused for
    the other; an adapter built any other way compares by identity."""

    _make_args: tuple | None = None

    def __eq__(self, other) -> bool:
        if self._make_args is None or type(other) is not type(self):
            return self is other
        return self._make_args == other._make_args

    def __hash__(self) -> int:
        return hash(self._make_args) if self._make_args is not None else id(self)


def wrapped_attr(env, name: str, default):
    """``env.name``, or that of the first env it wraps (through ``.env``) that has one."""
    while env is not None:
        value = getattr(env, name, None)
        if value is not None:
            return value
        env = getattr(env, "env", None)
    return default


def wrapped_instance(env, cls: type):
    """``env`` itself or the first env it wraps (through ``.env``) that is a ``cls``, or None."""
    while env is not None:
        if isinstance(env, cls):
            return env
        env = getattr(env, "env", None)
    return None


def raw_key(key: jax.Array) -> jax.Array:
    """``key`` as a raw ``uint32`` key (`jax.random.key_data` of a typed one): for suites that
    keep raw keys in their state (brax, Playground, Navix, Jumanji, XLand-MiniGrid)."""
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(key)
    return key


def cast_like(new: Any, old: Any) -> Any:
    """``new`` with every leaf cast to the dtype of ``old``'s (a suite's step may change a state
    leaf's dtype or weak type, which a ``lax.scan`` carry does not allow)."""
    return jax.tree.map(lambda n, o: jnp.asarray(n, jnp.asarray(o).dtype), new, old)


def runs_on_host(env) -> bool:
    """Whether ``env`` (or an env it wraps) steps host-side emulators through FFI calls
    (``host_pool = True``, e.g. Atari): its programs must not be partitioned over devices,
    since each device would step the same emulators."""
    return bool(wrapped_attr(env, "host_pool", False))


def frames_per_step(env) -> int:
    """Emulator frames behind one env step of ``env`` (or an env it wraps): Atari's frame skip
    (4 under both presets), 1 for every other env. Benchmarks on Atari are quoted in frames as
    often as in agent steps; reports show both."""
    return int(wrapped_attr(env, "frames_per_step", 1))


class Environment:
    """Base class. Subclasses implement `default_params`, `reset_env`, `step_env` and spaces.

    Instances are hashable and immutable by convention so they can be closed over by jitted
    functions (they are static; everything numeric lives in ``params``).
    """

    name: str = "Environment"
    #: The LLVM optimization level at which programs stepping this env run fastest on a CPU,
    #: when it differs from the engine's (`jaxrl.platform`): an env whose step is long
    #: XLA-generated code (brax's own physics, Playground's tasks) sets 3. None: no preference.
    cpu_opt_level: int | None = None

    @property
    def default_params(self) -> Any:
        raise NotImplementedError

    def reset_env(self, key: jax.Array, params: Any) -> tuple[jax.Array, Any]:
        raise NotImplementedError

    def step_env(
        self, key: jax.Array, state: Any, action: jax.Array, params: Any
    ) -> tuple[jax.Array, Any, jax.Array, jax.Array, jax.Array, dict]:
        """One transition without auto-reset: ``(obs, state, reward, terminated, truncated, info)``."""
        raise NotImplementedError

    def observation_space(self, params: Any) -> Space:
        raise NotImplementedError

    def action_space(self, params: Any) -> Space:
        raise NotImplementedError

    # -- the protocol ------------------------------------------------------------------------
    def reset(self, key: jax.Array, params: Any = None) -> tuple[jax.Array, Any]:
        """Start an episode. Returns ``(obs, state)``."""
        params = self.default_params if params is None else params
        return self.reset_env(key, params)

    def step(self, key: jax.Array, state: Any, action: jax.Array, params: Any = None) -> StepResult:
        """Step with auto-reset; see the module docstring for the contract."""
        params = self.default_params if params is None else params
        key_step, key_reset = jax.random.split(key)
        with jax.named_scope("env_step"):  # the scopes a profile reads (experiments/profile_chunk)
            obs_st, state_st, reward, terminated, truncated, info = self.step_env(
                key_step, state, action, params
            )
        terminated = jnp.asarray(terminated, dtype=bool)
        truncated = jnp.asarray(truncated, dtype=bool)
        if not resets_on_step():
            return without_reset(obs_st, state_st, reward, terminated, truncated, info)
        with jax.named_scope("env_reset"):
            obs_re, state_re = self.reset_env(key_reset, params)
            return auto_reset(obs_st, state_st, obs_re, state_re, reward, terminated, truncated,
                              info)


def auto_reset(obs_st, state_st, obs_re, state_re, reward, terminated, truncated, info):
    """Select the reset branch where the episode ended and record ``final_observation``."""
    done = jnp.logical_or(terminated, truncated)
    select = lambda re, st: jax.lax.select(jnp.broadcast_to(done, st.shape), re, st)
    state = jax.tree.map(select, state_re, state_st)
    obs = jax.tree.map(select, obs_re, obs_st)
    info = {**info, "final_observation": obs_st}
    return obs, state, jnp.asarray(reward, jnp.float32), terminated, truncated, info


def without_reset(obs_st, state_st, reward, terminated, truncated, info) -> StepResult:
    """`auto_reset`'s result with no reset to select: the stepped obs and state as they are
    (`first_episode_only`)."""
    info = {**info, "final_observation": obs_st}
    return obs_st, state_st, jnp.asarray(reward, jnp.float32), terminated, truncated, info
