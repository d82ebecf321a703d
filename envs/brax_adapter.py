"""brax environments speaking the jaxrl env protocol.

    env, params = make_brax("hopper", backend="mjx", episode_length=1000)
    obs, state = env.reset(key, params)
    obs, state, reward, terminated, truncated, info = env.step(key, state, action, params)

The adapter wraps the RAW brax env (``brax.envs.get_environment``), not brax's training
wrappers, and implements the time limit and auto-reset itself:

* ``terminated`` is brax's ``done`` (an absorbing state, e.g. the hopper fell).
* ``truncated`` is ``t >= params.episode_length`` where ``t`` counts agent steps (calls to
  ``step``, *not* physics frames and not multiplied by ``action_repeat``; brax's own
  ``EpisodeWrapper`` counts ``action_repeat`` frames per step instead). It is computed
  independently of ``terminated``, so **both can be true on the same step**, as in gymnax and
  Gymnasium; ``terminated`` then wins for bootstrapping (see ``envs.core``). Both flags always
  reach the caller unmerged.
* auto-reset (the shared ``envs.core.auto_reset``) calls the raw env's ``reset`` with a FRESH
  key (split from the ``step`` key) at every episode end, so consecutive episodes start from
  different initial states. (brax's ``AutoResetWrapper`` instead replays a cached first state.)
* ``info["final_observation"]`` is the last observation of the episode that just ended (equal
  to ``obs`` otherwise); ``info["metrics"]`` is brax's per-step metrics dict of that transition.
* ``action_repeat`` (static) repeats the action that many physics-env steps, summing rewards;
  once brax reports ``done`` inside the repeat the state is frozen and later rewards dropped.

Spaces: observations ``Box(-inf, inf, (observation_size,))``, actions
``Box(-1, 1, (action_size,))`` (actions are cast to float32 and NOT clipped here).

Params: `BraxParams` (a ``flax.struct`` dataclass) with ``episode_length``, which may be a traced
/ vmapped integer. The physics system itself stays in the (static) env object.

brax is imported lazily (`brax_envs`, inside `make_brax` / `BRAX_NAMES`) so that ``import envs`` stays fast.

brax 0.14.2 quirks handled here: the raw env's ``reset`` and ``step`` return states whose
leaves differ in JAX weak-typedness (e.g. ``done`` is a strong float32 after reset and a weak one
after step), which would retrace ``jit`` and break ``lax.select``/``scan`` carries; the adapter
casts every state leaf to the dtype of the reset state's leaf (strong). The ``fast`` test env
ignores ``backend``. ``swimmer`` only supports the ``generalized`` backend and that fails
under jax 0.10 (``jnp.clip(a_min=...)``), so it cannot be built.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.core import Environment, EqualByConstruction, raw_key
from envs.spaces import Box

#: The physics pipelines brax 0.14.2's ``PipelineEnv`` accepts.
BRAX_BACKENDS: tuple[str, ...] = ("mjx", "generalized", "positional", "spring")

#: brax's registered env names (``brax.envs._envs``, brax has no public accessor). Computed on
#: each access (module ``__getattr__``) so importing this module does not import brax.
BRAX_NAMES: tuple[str, ...]


def __getattr__(attr: str) -> Any:
    if attr == "BRAX_NAMES":
        return tuple(brax_envs()._envs)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


# what importing brax 0.14 prints to stdout when the optional warp packages are absent
_IMPORT_NOISE = ("Failed to import warp:", "Failed to import mujoco_warp:")


def brax_envs():
    """``brax.envs``, imported with an offscreen OpenGL (`headless_gl`) and without the lines
    brax prints on import when the optional ``warp`` packages are absent (any other line it
    prints is passed on)."""
    headless_gl()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        from brax import envs
    kept = [line for line in printed.getvalue().splitlines() if not line.startswith(_IMPORT_NOISE)]
    if kept:
        print("\n".join(kept))
    return envs


def headless_gl() -> None:
    """Pick an offscreen OpenGL for MuJoCo (EGL) where no display exists and the user chose
    none (for `envs.render`). MuJoCo reads ``MUJOCO_GL`` once, when first imported: this runs
    before brax, which imports it."""
    if not os.environ.get("DISPLAY") and "mujoco" not in sys.modules:
        os.environ.setdefault("MUJOCO_GL", "egl")
        os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])


@struct.dataclass
class BraxParams:
    """Numeric env parameters (a pytree; vmappable). ``episode_length`` is the time limit."""

    episode_length: Any = 1000


@struct.dataclass
class BraxEnvState:
    """``brax_state``: the raw brax ``State`` (pipeline state, obs, reward, done, metrics, info);
    ``t``: agent steps taken in the current episode (int32)."""

    brax_state: Any
    t: jax.Array


class BraxEnv(EqualByConstruction, Environment):
    """Adapter around a raw (unwrapped) brax ``Env`` instance.

    Static; close over it in ``jit``. Adapters made by `make_brax` with the same name,
    backend, ``action_repeat`` and constructor arguments are equal (and hash alike), so
    compiled programs keyed by the env are reused; others compare by identity.
    ``episode_length`` only sets ``default_params``; the time limit actually used is
    ``params.episode_length``.
    """

    def __init__(
        self,
        brax_env: Any,
        name: str | None = None,
        *,
        backend: str | None = None,
        episode_length: int = 1000,
        action_repeat: int = 1,
    ):
        if int(action_repeat) < 1:
            raise ValueError(f"action_repeat must be >= 1, got {action_repeat}")
        self._env = brax_env
        self.name = name if name is not None else type(brax_env).__name__
        self.backend = backend
        # brax's own pipelines are long XLA-generated fusions, which LLVM's -O3 runs up to
        # ~1.6x faster than the engine's -O2 on a CPU (`jaxrl.platform`); MJX's hopper is not
        # faster at -O3 (PPO 0.92x), so MJX keeps the engine's level
        self.cpu_opt_level: int | None = None if backend == "mjx" else 3
        self.action_repeat = int(action_repeat)
        self._episode_length = int(episode_length)
        # Abstract reset state (no compilation): sizes, and the dtypes every state leaf is
        # cast to (brax's reset/step disagree on weak types).
        abstract_key = jax.ShapeDtypeStruct((2,), jnp.uint32)  # a raw key; only shapes matter
        self._reset_avals = jax.eval_shape(brax_env.reset, abstract_key)
        self.observation_size = self._obs_size(self._reset_avals.obs)
        self.action_size = int(brax_env.action_size)

    @property
    def brax_env(self) -> Any:
        """The wrapped raw brax env."""
        return self._env

    def __repr__(self) -> str:
        return f"BraxEnv({self.name!r}, backend={self.backend!r})"

    @property
    def default_params(self) -> BraxParams:
        return BraxParams(episode_length=self._episode_length)

    def observation_space(self, params: Any = None) -> Box:
        return Box(low=-np.inf, high=np.inf, shape=(self.observation_size,))

    def action_space(self, params: Any = None) -> Box:
        return Box(low=-1.0, high=1.0, shape=(self.action_size,))

    # -- internals ---------------------------------------------------------------------------
    def _obs_size(self, obs: Any) -> int:
        """The size of the observation the policy sees, from the reset state's (abstract) one."""
        if not (hasattr(obs, "shape") and len(obs.shape) == 1):
            raise NotImplementedError(
                f"brax env {self.name!r}: only flat array observations are supported, got "
                f"{jax.tree.map(lambda x: x.shape, obs)}"
            )
        return int(obs.shape[0])

    def _obs(self, raw_obs: Any) -> jax.Array:
        """The observation the policy sees, from the raw env's."""
        return jnp.asarray(raw_obs, jnp.float32)

    def _canonical(self, brax_state: Any) -> Any:
        """Cast every leaf to the (strong) dtype of the reset state's leaf."""
        ref = self._reset_avals
        if jax.tree.structure(brax_state) != jax.tree.structure(ref):
            raise ValueError(
                f"brax env {self.name!r}: step changed the state's tree structure "
                f"({jax.tree.structure(ref)} -> {jax.tree.structure(brax_state)})"
            )
        return jax.tree.map(lambda x, r: jax.lax.convert_element_type(x, r.dtype), brax_state, ref)

    def _raw_step(self, brax_state: Any, action: jax.Array) -> Any:
        if self.action_repeat == 1:
            return self._canonical(self._env.step(brax_state, action))

        def body(carry, _):
            state, total, done = carry
            nxt = self._canonical(self._env.step(state, action))
            state = jax.tree.map(lambda old, new: jnp.where(done, old, new), state, nxt)
            total = total + jnp.where(done, 0.0, nxt.reward)
            done = jnp.logical_or(done, nxt.done != 0)
            return (state, total, done), None

        init = (brax_state, jnp.zeros((), jnp.float32), jnp.zeros((), bool))
        (state, total, _), _ = jax.lax.scan(body, init, None, length=self.action_repeat)
        return state.replace(reward=total.astype(state.reward.dtype))

    # -- Environment hooks (the base class adds auto-reset and final_observation) -------------
    def reset_env(self, key: jax.Array, params: Any) -> tuple[jax.Array, BraxEnvState]:
        key = raw_key(key)
        brax_state = self._canonical(self._env.reset(key))
        state = BraxEnvState(brax_state=brax_state, t=jnp.zeros((), jnp.int32))
        return self._obs(brax_state.obs), state

    def step_env(self, key: jax.Array, state: BraxEnvState, action: jax.Array, params: Any):
        del key  # brax dynamics are deterministic given the state
        action = jnp.asarray(action, jnp.float32)
        brax_state = self._raw_step(state.brax_state, action)
        t = state.t + 1
        terminated = brax_state.done != 0
        truncated = t >= params.episode_length
        info = {"metrics": dict(brax_state.metrics)}
        obs = self._obs(brax_state.obs)
        reward = jnp.asarray(brax_state.reward, jnp.float32)
        return obs, BraxEnvState(brax_state=brax_state, t=t), reward, terminated, truncated, info


def make_brax(
    name: str,
    backend: str = "mjx",
    episode_length: int = 1000,
    action_repeat: int = 1,
    **kwargs: Any,
) -> tuple[BraxEnv, BraxParams]:
    """Build the raw brax env ``name`` on physics ``backend`` and wrap it. Returns ``(env, params)``.

    ``kwargs`` go to the brax env constructor (e.g. ``reset_noise_scale``,
    ``terminate_when_unhealthy``). ``episode_length`` sets ``params.episode_length`` (the time
    limit, in agent steps); ``action_repeat`` is static.
    """
    if backend not in BRAX_BACKENDS:
        raise ValueError(
            f"unknown brax backend {backend!r}; valid backends: {', '.join(BRAX_BACKENDS)}"
        )
    registry = brax_envs()
    if name not in registry._envs:
        raise ValueError(f"unknown brax env {name!r}; known: {', '.join(registry._envs)}")
    make_args = (name, backend, int(action_repeat),
                 tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    key = (*make_args, int(episode_length))
    if key not in _BUILT:  # build once per process: see `_BUILT`
        raw = registry.get_environment(name, backend=backend, **kwargs)
        env = BraxEnv(raw, name=name, backend=backend, episode_length=episode_length,
                      action_repeat=action_repeat)
        env._make_args = make_args
        _BUILT[key] = env
    env = _BUILT[key]
    return env, env.default_params


def task_names() -> list[str]:
    """brax's env names (``brax:<name>`` for `envs.make`)."""
    return list(brax_envs()._envs)


make_task = make_brax  # ``brax:<name>`` for `envs.make`


# Built envs by make arguments. Building one parses the MuJoCo model and traces a reset for the
# observation shape (1.5-3 s on a 2-core CPU), which a sweep or a suite would otherwise pay for
# every config; a built env holds no mutable state (its state lives in `BraxEnvState`), so
# every `make` with the same arguments can share it.
_BUILT: dict[tuple, BraxEnv] = {}
