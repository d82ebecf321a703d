"""MuJoCo Playground's tasks in the jaxrl env protocol (the ``playground`` extra).

    env, params = envs.make("playground:CartpoleBalance")

Playground's envs are MJX pipeline envs with brax's interface (``reset(rng) -> State``,
``step(state, action) -> State``, no time limit and no auto-reset of their own: Playground adds
those in its training wrappers, which are not used here). `PlaygroundEnv` is the brax adapter
(`envs.brax_adapter.BraxEnv`: time limit in agent steps as truncation, auto-reset with a fresh
key, ``final_observation``, ``action_repeat``) plus what Playground differs in:

* **Physics.** MJX's JAX implementation (``impl='jax'``): Playground 0.2 defaults to MuJoCo
  Warp, whose ``vmap`` over seeds is not established; another ``impl`` is refused.
* **Time limit.** The task's own ``episode_length`` (1,000 agent steps in DM Control) and
  ``action_repeat`` from its config, unless given.
* **Termination.** The task's ``done``. In the DM Control tasks it is set only when the
  physics state turns NaN, which is no absorbing state but a fault: the step also reports
  ``info["env_nonfinite"]`` (any non-finite position, velocity, observation or reward), which
  the training loop's NaN guard turns into a stop that names the env.
* **Dict observations** (locomotion, manipulation: ``state``, ``privileged_state``, ...):
  the observation is ``obs_key`` (``"state"`` by default), flattened. With ``critic_key``
  (e.g. ``"privileged_state"``) it is ``obs_key``'s entries then ``critic_key``'s, and
  ``policy_obs_size`` says where the policy's part ends: ``asymmetric_critic=True`` (PPO, A2C,
  VPG, TRPO, SAC, TD3, DDPG) gives the value net or critics all of it and the policy its own
  part.
* **Assets.** Locomotion and manipulation tasks read MuJoCo Menagerie, which Playground clones
  from GitHub at first use. ``JAXRL_MENAGERIE_PATH`` points it at a local copy; without one
  and without the network, building such a task is one line saying so.

Only what the jaxrl protocol needs is imported at module level; Playground is imported by
`task_names` and `make_task`.
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envs.brax_adapter import BraxEnv, headless_gl

#: The environment variable naming a local MuJoCo Menagerie checkout.
MENAGERIE_ENV = "JAXRL_MENAGERIE_PATH"


class MenagerieMissingError(ValueError):
    """A locomotion or manipulation task without MuJoCo Menagerie's assets."""


def _playground():
    """``mujoco_playground``, imported without the lines its import prints (the warp notice)."""
    headless_gl()
    with contextlib.redirect_stdout(io.StringIO()):
        import mujoco_playground
    return mujoco_playground


def task_names() -> list[str]:
    """Every task Playground registers: DM Control Suite, locomotion, manipulation."""
    return list(_playground().registry.ALL_ENVS)


def _menagerie(task: str) -> None:
    """Point Playground at ``$JAXRL_MENAGERIE_PATH`` if set; raise `MenagerieMissingError`
    when a task that needs Menagerie has none."""
    pg = _playground()
    if task in pg.dm_control_suite.ALL_ENVS:
        return
    from etils import epath
    from mujoco_playground._src import mjx_env

    local = os.environ.get(MENAGERIE_ENV)
    if local:
        mjx_env.MENAGERIE_PATH = epath.Path(local)
    if not mjx_env.MENAGERIE_PATH.exists():
        raise MenagerieMissingError(
            f"playground:{task} needs MuJoCo Menagerie's assets, not found at "
            f"{mjx_env.MENAGERIE_PATH}: set {MENAGERIE_ENV} to a clone of "
            f"github.com/google-deepmind/mujoco_menagerie (commit "
            f"{mjx_env.MENAGERIE_COMMIT_SHA[:12]})")


class PlaygroundEnv(BraxEnv):
    """A Playground task; see the module docstring. Static: close over it in ``jit``."""

    def __init__(self, pg_env: Any, name: str, *, episode_length: int, action_repeat: int,
                 obs_key: str = "state", critic_key: str | None = None):
        self.obs_key, self.critic_key = obs_key, critic_key
        self.policy_obs_size: int | None = None  # set by `_obs_size` where critic_key is given
        super().__init__(pg_env, name=name, backend="mjx", episode_length=episode_length,
                         action_repeat=action_repeat)
        # MJX, but Playground's DM Control tasks step up to 1.8x faster at LLVM -O3 on a CPU
        # (CartpoleBalance; CheetahRun the same at both): `jaxrl.platform`
        self.cpu_opt_level = 3

    def __repr__(self) -> str:
        return f"PlaygroundEnv({self.name!r})"

    def _keys(self, obs: Any) -> tuple[str, ...]:
        """The dict observation's entries the observation is made of, checked by name."""
        keys = (self.obs_key,) if self.critic_key is None else (self.obs_key, self.critic_key)
        missing = [k for k in keys if k not in obs]
        if missing:
            raise ValueError(f"{self.name} has no observation {missing[0]!r}; it has "
                             f"{', '.join(obs)}")
        return keys

    def _obs(self, raw_obs: Any) -> jax.Array:
        if not isinstance(raw_obs, dict):
            return jnp.asarray(raw_obs, jnp.float32).reshape(-1)
        return jnp.concatenate([jnp.asarray(raw_obs[k], jnp.float32).reshape(-1)
                                for k in self._keys(raw_obs)])

    def _obs_size(self, obs: Any) -> int:
        if not isinstance(obs, dict):
            if self.critic_key is not None:
                raise ValueError(f"{self.name} has one flat observation: no {self.critic_key!r} "
                                 "for a critic_key")
            return int(np.prod(obs.shape))
        sizes = [int(np.prod(obs[k].shape)) for k in self._keys(obs)]
        if self.critic_key is not None:
            self.policy_obs_size = sizes[0]
        return sum(sizes)

    def step_env(self, key: jax.Array, state: Any, action: jax.Array, params: Any):
        obs, state, reward, terminated, truncated, info = super().step_env(key, state, action,
                                                                          params)
        data = state.brax_state.data
        finite = (jnp.all(jnp.isfinite(data.qpos)) & jnp.all(jnp.isfinite(data.qvel))
                  & jnp.all(jnp.isfinite(obs)) & jnp.isfinite(reward))
        return obs, state, reward, terminated, truncated, {**info, "env_nonfinite": ~finite}


def make_task(task: str, episode_length: int | None = None, action_repeat: int | None = None,
              obs_key: str = "state", critic_key: str | None = None, impl: str = "jax",
              **config_overrides: Any) -> tuple[PlaygroundEnv, Any]:
    """Playground's ``task`` on MJX. ``episode_length`` / ``action_repeat`` default to the
    task's config; ``obs_key`` / ``critic_key`` pick a dict observation's parts (module
    docstring); other keyword arguments override the task's config (e.g. ``ctrl_dt``)."""
    if impl != "jax":
        raise ValueError(f"impl={impl!r}: jaxrl runs Playground on MJX's JAX implementation "
                         "(impl='jax'), whose vmap over seeds and envs it relies on")
    _menagerie(task)
    pg = _playground()
    config = pg.registry.get_default_config(task)
    episode_length = int(config.episode_length if episode_length is None else episode_length)
    action_repeat = int(config.get("action_repeat", 1) if action_repeat is None
                        else action_repeat)
    make_args = (task, action_repeat, obs_key, critic_key,
                 tuple(sorted((k, repr(v)) for k, v in config_overrides.items())))
    key = (*make_args, episode_length)
    if key not in _BUILT:
        with contextlib.redirect_stdout(io.StringIO()):  # Playground prints notices on load
            raw = pg.registry.load(task, config_overrides={**config_overrides, "impl": "jax"})
        env = PlaygroundEnv(raw, f"playground:{task}", episode_length=episode_length,
                            action_repeat=action_repeat, obs_key=obs_key,
                            critic_key=critic_key)
        env._make_args = make_args
        _BUILT[key] = env
    env = _BUILT[key]
    return env, env.default_params


# Built envs by make arguments (as `envs.brax_adapter._BUILT`: parsing the model and tracing a
# reset costs seconds, and a built env holds no mutable state).
_BUILT: dict[tuple, PlaygroundEnv] = {}
