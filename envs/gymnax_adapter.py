"""gymnax environments speaking the jaxrl env protocol.

    env, params = make_gymnax("CartPole-v1")
    obs, state = env.reset(key, params)
    obs, state, reward, terminated, truncated, info = env.step(key, state, action, params)

gymnax 1.0 already has the protocol's shape (6-tuple step, auto-reset, ``terminated`` and
``truncated`` reported separately with ``truncated = time >= max_steps_in_episode``, and
``info["final_observation"]``), so the adapter delegates to gymnax's own ``reset``/``step``
(some envs, e.g. DeepSea-bsuite, override ``step``) and only normalises what comes out:

* observations are ``float32`` arrays (gymnax returns ``int32`` for e.g. FourRooms-misc);
  an integer-valued observation with a ``Discrete(n)`` observation space (FrozenLake-misc) is
  one-hot encoded to a ``float32`` vector of length ``n`` and declared as ``Box(0, 1, (n,))``;
  ``info["final_observation"]`` gets the same treatment;
* actions are cast to the action space's dtype (``int32`` for discrete, ``float32`` for box);
* state leaves are made strongly typed (gymnax's reset and step disagree on weak types, which
  would make a jitted ``step`` retrace on its second call);
* reward is ``float32`` (some bsuite/misc envs return ``int32``), flags are ``bool``;
* gymnax's ``+-finfo(float32).max`` bounds become ``+-inf`` (so ``Box.bounded`` is honest);
* a few gymnax envs emit observations outside their own declared bounds (see
  ``_UNRELIABLE_OBS_BOUNDS``); for those the observation space is declared unbounded.

Both ``terminated`` and ``truncated`` can be true on the same step (e.g. DeepSea-bsuite, whose
episode length equals its time limit); then ``terminated`` wins for bootstrapping.

Params stay gymnax's own ``EnvParams`` pytree, so they can be ``replace``-d
(``params.replace(max_steps_in_episode=7)``) and vmapped.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envs.core import Environment, EqualByConstruction, StepResult
from envs.deferred import import_deferring_plots
from envs.spaces import Box, Discrete, Space

#: All env ids gymnax registers (``gymnax.registered_envs``). Computed on first access (module
#: ``__getattr__``) so that importing this module does not import gymnax.
GYMNAX_NAMES: tuple[str, ...]


def __getattr__(attr: str) -> Any:
    if attr == "GYMNAX_NAMES":
        gymnax = import_deferring_plots("gymnax")
        return tuple(gymnax.registered_envs)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


#: gymnax envs whose observations leave gymnax's declared observation bounds (found by random
#: rollouts with gymnax 1.0.1): MemoryChain's context is +-1 but declared [0, 2]; GaussianBandit's
#: last reward is Gaussian but declared >= 0; MetaMaze's last reward reaches 10 but is declared
#: <= 1; UmbrellaChain's normalised time dips to -1.5e-8. Their spaces are declared unbounded.
_UNRELIABLE_OBS_BOUNDS = frozenset(
    {"MemoryChain-bsuite", "GaussianBandit-misc", "MetaMaze-misc", "UmbrellaChain-bsuite"}
)


def _convert_space(space: Any, env_name: str, what: str) -> Space:
    """gymnax space -> jaxrl space (``Discrete`` / float32 ``Box``)."""
    from gymnax.environments import spaces as gspaces

    if isinstance(space, gspaces.Discrete):
        dtype = jnp.int64 if np.dtype(space.dtype) == np.dtype(np.int64) else jnp.int32
        return Discrete(int(space.n), dtype=dtype)
    if isinstance(space, gspaces.Box):
        shape = tuple(int(s) for s in space.shape)
        low = np.asarray(space.low, dtype=np.float32)
        high = np.asarray(space.high, dtype=np.float32)
        # gymnax writes "unbounded" as +-finfo(float32).max; make it +-inf so ``Box.bounded``
        # is honest.
        big = np.finfo(np.float32).max
        low = np.where(low <= -big, -np.inf, low).astype(np.float32)
        high = np.where(high >= big, np.inf, high).astype(np.float32)
        return Box(low=low, high=high, shape=shape)
    raise NotImplementedError(
        f"gymnax env {env_name!r}: its {what} space {type(space).__name__} ({space!r}) has no "
        "jaxrl equivalent (only Discrete and Box are supported)"
    )


def _host_key(params: Any) -> tuple | None:
    """A hashable key of ``params`` when every leaf is a host value (Python / NumPy scalar or
    array), else None (a traced or device leaf: no caching)."""
    leaves, treedef = jax.tree.flatten(params)
    if not all(isinstance(x, (bool, int, float, np.ndarray, np.generic)) for x in leaves):
        return None
    return (str(treedef), *((np.asarray(x).dtype.str, np.asarray(x).shape,
                             np.asarray(x).tobytes()) for x in leaves))


class GymnaxEnv(EqualByConstruction, Environment):
    """Adapter around a ``gymnax.environments.environment.Environment`` instance.

    Static, so it can be closed over by ``jit``; all numbers live in ``params`` (gymnax's
    ``EnvParams``). Two adapters made by `make_gymnax` with the same name and arguments are
    equal (and hash alike), so compiled programs keyed by the env are reused across calls;
    an adapter around a gymnax env built elsewhere compares by identity.
    """

    def __init__(self, gymnax_env: Any, name: str | None = None, make_args: tuple | None = None):
        self._env = gymnax_env
        self.name = name if name is not None else gymnax_env.name
        self._make_args = make_args  # (name, sorted kwargs) when built by make_gymnax
        params = gymnax_env.default_params
        gobs = gymnax_env.observation_space(params)
        from gymnax.environments import spaces as gspaces

        # A Discrete observation (an integer state index) is one-hot encoded.
        self._obs_onehot = int(gobs.n) if isinstance(gobs, gspaces.Discrete) else None
        # Convert once now so an unsupported space fails at construction, naming the env.
        self._space_cache: dict[tuple, tuple[Box, Space]] = {}
        self._spaces(params)

    @property
    def gymnax_env(self) -> Any:
        """The wrapped gymnax environment."""
        return self._env

    def __repr__(self) -> str:
        return f"GymnaxEnv({self.name!r})"


    # -- spaces ------------------------------------------------------------------------------
    def _convert_obs_space(self, gspace: Any) -> Box:
        if self._obs_onehot is not None:
            return Box(low=0.0, high=1.0, shape=(self._obs_onehot,))
        space = _convert_space(gspace, self.name, "observation")
        assert isinstance(space, Box)  # Discrete observations are handled by _obs_onehot
        if self.name in _UNRELIABLE_OBS_BOUNDS:
            return Box(low=-np.inf, high=np.inf, shape=space.shape)
        return space

    def observation_space(self, params: Any = None) -> Box:
        return self._spaces(params)[0]

    def action_space(self, params: Any = None) -> Space:
        return self._spaces(params)[1]

    def _spaces(self, params: Any) -> tuple[Box, Space]:
        """``(observation space, action space)`` for ``params``, converted once per distinct
        params value. gymnax builds bounds with ``jnp``; converting them needs a device read,
        which must not happen over and over inside traced code (it can stall there), so the
        result is cached under a key made of the params' host values."""
        params = self.default_params if params is None else params
        key = _host_key(params)
        cached = self._space_cache.get(key) if key is not None else None
        if cached is None:
            with jax.ensure_compile_time_eval():  # keep gymnax's jnp bounds concrete
                cached = (self._convert_obs_space(self._env.observation_space(params)),
                          _convert_space(self._env.action_space(params), self.name, "action"))
            if key is not None:
                self._space_cache[key] = cached
        return cached

    @property
    def default_params(self) -> Any:
        return self._env.default_params

    # -- conversions -------------------------------------------------------------------------
    def _obs(self, obs: Any) -> jax.Array:
        if self._obs_onehot is not None:
            return jax.nn.one_hot(obs, self._obs_onehot, dtype=jnp.float32)
        return jax.tree.map(lambda x: jnp.asarray(x, dtype=jnp.float32), obs)

    @staticmethod
    def _strong(state: Any) -> Any:
        # gymnax's reset returns some weakly-typed state leaves that its step returns strongly
        # typed (e.g. Pendulum's last_u): make all strong so reset and step states share one
        # type and a jitted step does not retrace on its second call.
        def strong(x):
            dtype = jnp.result_type(x)
            if jnp.issubdtype(dtype, jax.dtypes.extended):  # e.g. typed PRNG keys
                return x
            return jax.lax.convert_element_type(x, dtype)

        return jax.tree.map(strong, state)

    def _action(self, action: Any) -> jax.Array:
        return jnp.asarray(action, dtype=self.action_space().dtype)

    # -- the protocol ------------------------------------------------------------------------
    def reset(self, key: jax.Array, params: Any = None) -> tuple[jax.Array, Any]:
        params = self.default_params if params is None else params
        obs, state = self._env.reset(key, params)
        return self._obs(obs), self._strong(state)

    def step(self, key: jax.Array, state: Any, action: jax.Array, params: Any = None) -> StepResult:
        params = self.default_params if params is None else params
        with jax.named_scope("env_step"):  # gymnax's step resets inside: reset counts here
            obs, state, reward, terminated, truncated, info = self._env.step(
                key, state, self._action(action), params
            )
        info = {**info, "final_observation": self._obs(info["final_observation"])}
        return (
            self._obs(obs),
            self._strong(state),
            jnp.asarray(reward, dtype=jnp.float32),
            jnp.asarray(terminated, dtype=bool),
            jnp.asarray(truncated, dtype=bool),
            info,
        )


def make_gymnax(name: str, **kwargs: Any) -> tuple[GymnaxEnv, Any]:
    """``gymnax.make(name, **kwargs)`` wrapped in the jaxrl protocol. Returns ``(env, params)``."""
    gymnax = import_deferring_plots("gymnax")
    names = tuple(gymnax.registered_envs)
    if name not in names:
        raise ValueError(f"unknown gymnax env {name!r}; known: {', '.join(names)}")

    try:
        genv, params = gymnax.make(name, **kwargs)
    except OSError as e:  # MNISTBandit-bsuite downloads MNIST on construction
        raise RuntimeError(f"gymnax could not construct {name!r}: {e}") from e
    make_args = (name, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    return GymnaxEnv(genv, name=name, make_args=make_args), params
