"""Atari 2600 games inside jitted programs, through ale-py's XLA interface (the `atari` extra).

``envs.make("atari:Breakout")`` gives an env of the jaxrl protocol whose ``reset``/``step`` are
FFI calls into a pool of ALE emulators (ale-py >= 0.12 ships the ROMs and the FFI targets).
The emulators are host state, so three things differ from a pure-JAX env:

* **One pool per traced reset.** The engine vmaps ``env.reset`` over envs (and over members);
  `jax.custom_batching.custom_vmap` folds every vmapped axis into one flat batch of ``B``
  emulators, and tracing that reset creates a pool of exactly ``B`` emulators
  (`AtariVectorEnv`). Its handle travels in the env state, so the steps of a program (and of the
  next chunk program) drive the pool their state came from, and an evaluation program, which
  traces its own reset, gets its own pool. Member ``m`` owns rows ``[m*N, (m+1)*N)``, seeded
  from its own keys, so vmapped seeds give what the seeds give one by one. A pool (all members'
  emulators together) runs one emulator thread per usable core (`AtariEnv.pool_threads`;
  ale-py's own default counts the host's online processors).
* **Same-step reset.** ALE resets a finished emulator on the *next* step (ignoring that step's
  action, reward 0). Here the step resets every finished emulator at once (one FFI reset per
  finished env, which cancels ALE's pending reset): ``obs`` is the new game's first frame
  stack, ``info["final_observation"]`` the last one of the game that ended, and the extra
  transition never exists.
* **Training signal vs game.** ALE reports the raw score; ``clip_rewards`` gives the agent
  ``sign(r)``, and ``life_loss_terminal`` marks a lost life as ``terminated`` (no bootstrap
  across it) while the game goes on without a reset (baselines' ``EpisodicLifeEnv``).
  ``info["true_reward"]`` and ``info["game_over"]`` carry the game's own score and end, and
  `envs.wrappers.EpisodeStatistics` reports returns over whole games from them. The frame
  limit (``max_frames``, ALE's 108,000) is truncation.

Where a lost life differs from baselines' wrappers: there, the "reset" after a lost life takes
a no-op step, then FIRE and action 2 (``FireResetEnv`` over ``EpisodicLifeEnv``), none of them
seen by the agent, and ``VecFrameStack`` restarts the stack from zeros; here the game goes on
with the agent's own actions and the stack carries over the frames before the loss. ale-py's
XLA step moves every emulator of a pool at once, so one emulator cannot take steps of its own;
its own ``episodic_life`` resets the whole game at a lost life, which is not baselines' either.
A game's reset presses FIRE once where the game has it (baselines: FIRE, then action 2).

Presets (`PRESETS`): ``"baselines"`` (reading 002 / OpenAI baselines, "NoFrameskip-v4" with
the usual wrappers: frame skip 4 with max-pooling, 84x84 grayscale, 4 stacked frames, up to 30
no-op starts, episodic life and clipped rewards for training) and ``"machado"`` (Machado et al.
2018 / v5: sticky actions 0.25, no life loss, the minimal action set unless
``full_action_space``).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.spaces import Box, Discrete

PRESETS: dict[str, dict[str, Any]] = {
    "baselines": dict(frame_skip=4, noop_max=30, sticky_actions=0.0, life_loss_terminal=True,
                      clip_rewards=True, full_action_space=False, fire_reset=True),
    "machado": dict(frame_skip=4, noop_max=0, sticky_actions=0.25, life_loss_terminal=False,
                    clip_rewards=False, full_action_space=False, fire_reset=False),
}


class AtariUnavailableError(ImportError):
    """ale-py (the ``atari`` extra) is not installed."""


def _ale():
    try:
        import ale_py
        from ale_py.vector_env import AtariVectorEnv
    except ImportError:
        raise AtariUnavailableError(
            "Atari envs need ale-py: pip install -e '.[atari]'") from None
    return ale_py, AtariVectorEnv


def rom_name(game: str) -> str:
    """``"Breakout"`` / ``"MsPacman"`` / ``"ms_pacman"`` -> ALE's ROM name ``"ms_pacman"``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", game).lower() if not game.islower() else game


def games() -> list[str]:
    """Every ROM ale-py ships (ROM names)."""
    ale_py, _ = _ale()
    return sorted(ale_py.roms.get_all_rom_ids())


def task_names() -> list[str]:
    """Every game ale-py ships, as `envs.make` names it after ``atari:``: CamelCase
    (``"SpaceInvaders"``) where `rom_name` maps it back to the ROM, else the ROM name itself
    (``"tic_tac_toe_3d"``); `make_task` takes both. Raises `AtariUnavailableError` without
    ale-py."""
    names = []
    for rom in games():
        camel = "".join(part.capitalize() for part in rom.split("_"))
        names.append(camel if rom_name(camel) == rom else rom)
    return names


def task_key(game: str) -> str:
    """What two spellings of one game share (its ROM name): the registry compares by it."""
    return rom_name(game)


def make_task(game: str, **kwargs) -> tuple[AtariEnv, None]:
    """``atari:<game>`` for `envs.make` (params None: the env has none)."""
    return AtariEnv(game, **kwargs), None


def usable_cores(cgroup_root: str | Path = "/sys/fs/cgroup") -> int:
    """The CPUs this process may run on: its affinity mask (``os.sched_getaffinity``), capped
    by a cgroup CPU quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) where one is set.

    Not ``os.cpu_count()`` nor ale-py's ``std::thread::hardware_concurrency()``: both count the
    host's online processors, which a container pinned to a few of them does not own."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity masks on this platform
        cores = os.cpu_count() or 1
    quota = _cgroup_cpu_quota(Path(cgroup_root))
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


def _cgroup_cpu_quota(root: Path) -> float | None:
    """CPUs' worth of time per period the cgroup allows (``None``: no quota, or unreadable)."""
    try:  # cgroup v2: "max 100000" or "1600000 100000"
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    for folder in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):  # cgroup v1: -1 is no quota
        try:
            quota = int((root / folder / "cpu.cfs_quota_us").read_text())
            period = int((root / folder / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        return None if quota <= 0 or period <= 0 else quota / period
    return None


@struct.dataclass
class AtariState:
    handle: jax.Array  # [8] uint8: the pool this env's emulator lives in
    lives: jax.Array  # [] int32 lives left (a decrease is a life loss)


class AtariEnv:
    """One ALE game; see the module docstring. Observations ``[84, 84, stack]`` float32 in
    ``[0, 1]`` (ALE's uint8 frames times float32 ``1 / 255``, channels last as the conv
    torsos read them).

    Two instances never compare equal (unlike the other adapters): a compiled program holds
    the handle of its env's pools, so it must not be reused for another instance."""

    host_pool = True  # `envs.core.runs_on_host`: the engine keeps its members on one device

    def __init__(self, game: str, preset: str = "baselines", max_frames: int = 108_000,
                 stack: int = 4, size: int = 84, num_threads: int | None = None, **overrides):
        if preset not in PRESETS:
            raise ValueError(f"unknown Atari preset {preset!r}; presets: {', '.join(PRESETS)}")
        unknown = set(overrides) - set(PRESETS["baselines"])
        if unknown:
            raise TypeError(f"unknown Atari option(s) {', '.join(sorted(unknown))}; options: "
                            f"{', '.join(PRESETS['baselines'])}, max_frames, stack, size, num_threads")
        ale_py, vector_env = _ale()
        self.game, self.rom = game, rom_name(game)
        with warnings.catch_warnings():  # ale-py warns before returning None
            warnings.simplefilter("ignore")
            missing = ale_py.roms.get_rom_path(self.rom) is None
        if missing:
            raise ValueError(f"ale-py ships no ROM {self.rom!r} (from {game!r}); see envs.atari.games()")
        self.name = f"atari:{game}"
        self.settings = {**PRESETS[preset], **overrides}
        self.max_frames, self.stack, self.size = max_frames, stack, size
        # emulator threads per pool: None, one per usable core (`pool_threads`); 0, ale-py's own
        # default; n, n threads (ale-py caps any count at the host's online processors)
        self.num_threads = num_threads
        self._vector_env = vector_env
        self._pools: list = []  # every pool this env created (kept alive: handles point into them)
        probe = self._new_pool(1)
        self.num_actions = int(probe.single_action_space.n)
        self._reset_flat = _flat(self._pool_reset, handle_args=())
        self._step_flat = _flat(self._pool_step, handle_args=(0,))

    @property
    def frames_per_step(self) -> int:
        """Emulator frames per agent step: the frame skip (`envs.core.frames_per_step`)."""
        return int(self.settings["frame_skip"])

    # -- the pool ------------------------------------------------------------------------------
    def pool_threads(self, size: int) -> int:
        """The ``num_threads`` a pool of ``size`` emulators is given (0: ale-py's default).

        By default one thread per usable core, at most one per emulator. ale-py's own default
        (``num_threads=0``) is ``min(size, std::thread::hardware_concurrency())``, the host's
        online processors: in a container that may use 16 of a GPU host's 200, a pool of 48
        emulators would get 48 threads. Its workers share one queue of emulators and each
        spins on the queue's semaphore before it sleeps, so threads beyond the cores only add
        switches and spinning. The thread count never changes a game (tested)."""
        if self.num_threads is not None:
            return self.num_threads
        return min(size, usable_cores())

    def _new_pool(self, size: int):
        s = self.settings
        pool = self._vector_env(
            self.rom, num_envs=size, num_threads=self.pool_threads(size), frameskip=s["frame_skip"],
            repeat_action_probability=s["sticky_actions"], noop_max=s["noop_max"],
            full_action_space=s["full_action_space"], max_num_frames_per_episode=self.max_frames,
            img_height=self.size, img_width=self.size, stack_num=self.stack, grayscale=True,
            maxpool=True, episodic_life=False, reward_clipping=False,
            use_fire_reset=s["fire_reset"])
        pool.xla()  # registers the FFI targets
        self._pools.append(pool)
        return pool

    def _obs_struct(self, batch: int):
        return jax.ShapeDtypeStruct((batch, self.stack, self.size, self.size), jnp.uint8)

    def _ffi_reset(self, handle, indices, seeds, batch: int):
        """ALE reset of the emulators at ``indices`` (``seeds``, -1: keep the RNG stream);
        returns ``(handle, obs [batch, ...], lives [batch])`` for the whole pool."""
        i32 = jax.ShapeDtypeStruct((batch,), jnp.int32)
        call = jax.ffi.ffi_call("atari_vector_xla_reset", (
            jax.ShapeDtypeStruct((8,), jnp.uint8), self._obs_struct(batch), i32, i32, i32, i32),
            has_side_effect=True)
        handle, obs, _, lives, _, _ = call(handle, indices, seeds)
        return handle, obs, lives

    def _pool_reset(self, seeds: jax.Array):
        """``seeds [B]`` -> ``(handle [8], obs [B, ...], lives [B])`` of a new pool of B."""
        batch = seeds.shape[0]
        pool = self._new_pool(batch)
        handle = jnp.asarray(np.frombuffer(pool.ale.handle(), dtype=np.uint8))
        return self._ffi_reset(handle, jnp.arange(batch, dtype=jnp.int32), seeds, batch)

    def _pool_step(self, handle: jax.Array, actions: jax.Array):
        """``actions [B]`` -> ``(handle, obs, final_obs, reward, terminated, truncated, lives,
        new_lives)``: every finished emulator reset in the same step (``obs`` and ``new_lives``
        after the resets, ``final_obs`` and ``lives`` before them)."""
        batch = actions.shape[0]
        i32, flag = (jax.ShapeDtypeStruct((batch,), t) for t in (jnp.int32, jnp.bool_))
        call = jax.ffi.ffi_call("atari_vector_xla_step", (
            jax.ShapeDtypeStruct((8,), jnp.uint8), self._obs_struct(batch), i32, flag, flag,
            i32, i32, i32, i32), has_side_effect=True)
        handle, final_obs, reward, term, trunc, _, lives, _, _ = call(
            handle, actions.astype(jnp.int32), jnp.ones((batch,), jnp.float32))
        done = term | trunc
        # only the finished emulators, in index order: a loop over all B with a cond each would
        # cost B predicate round trips per step on a GPU (and games end every few thousand steps)
        order, count = jnp.argsort(~done, stable=True), done.sum()

        def reset_next(carry):
            j, handle, obs, lives = carry
            i = order[j]
            handle, fresh, fresh_lives = self._ffi_reset(
                handle, i[None].astype(jnp.int32), jnp.full((1,), -1, jnp.int32), batch)
            return j + 1, handle, obs.at[i].set(fresh[i]), lives.at[i].set(fresh_lives[i])

        _, handle, obs, new_lives = jax.lax.while_loop(
            lambda c: c[0] < count, reset_next, (jnp.int32(0), handle, final_obs, lives))
        return handle, obs, final_obs, reward, term, trunc, lives, new_lives

    # -- the protocol ----------------------------------------------------------------------------
    @property
    def default_params(self):
        return None

    def observation_space(self, params=None) -> Box:
        return Box(0.0, 1.0, (self.size, self.size, self.stack))

    @staticmethod
    def _frames(stack: jax.Array) -> jax.Array:
        """ALE's ``[stack, H, W]`` uint8 -> ``[H, W, stack]`` float32 in [0, 1]."""
        # k * float32(1/255), not k / 255: one product on every backend (XLA may or may not
        # turn the division into it), which jaxrl's frame replay inverts exactly
        return jnp.moveaxis(stack, 0, -1).astype(jnp.float32) * np.float32(1 / 255)

    def action_space(self, params=None) -> Discrete:
        return Discrete(self.num_actions)

    def reset(self, key: jax.Array, params=None):
        seed = jax.random.randint(key, (), 0, np.iinfo(np.int32).max, jnp.int32)
        handle, obs, lives = self._reset_flat(seed[None])
        return self._frames(obs[0]), AtariState(handle, lives[0])

    def step(self, key: jax.Array, state: AtariState, action: jax.Array, params=None):
        handle, *rows = self._step_flat(state.handle, action[None])
        obs, final_obs, reward, term, trunc, lives, new_lives = (x[0] for x in rows)
        s = self.settings
        true_reward = reward.astype(jnp.float32)
        life_lost = (lives < state.lives) & ~term & ~trunc
        terminated = term | (life_lost if s["life_loss_terminal"] else False)
        info = {"final_observation": self._frames(final_obs), "true_reward": true_reward,
                "game_over": term | trunc, "life_lost": life_lost}
        train_reward = jnp.sign(true_reward) if s["clip_rewards"] else true_reward
        return (self._frames(obs), AtariState(handle, new_lives), train_reward, terminated, trunc,
                info)


def _flat(pool_fn, handle_args: tuple[int, ...]):
    """``pool_fn(*args)`` on one flat batch of emulators (every argument but the handles
    ``[B, ...]``; output 0 the handle ``[8]``, the rest ``[B, ...]``), callable under any
    number of vmaps: each vmapped axis is folded into the flat batch (``[M, B] -> [M*B]``),
    so the FFI call sees every member's emulators at once. Handles are the same for every
    member (one pool), so a batched handle is read from its first row."""
    fn = jax.custom_batching.custom_vmap(pool_fn)

    @fn.def_vmap
    def rule(axis_size, in_batched, *args):
        flat = []
        for i, (arg, batched) in enumerate(zip(args, in_batched)):
            if i in handle_args:
                flat.append(arg[0] if batched else arg)
                continue
            arg = arg if batched else jnp.broadcast_to(arg, (axis_size, *arg.shape))
            flat.append(arg.reshape(axis_size * arg.shape[1], *arg.shape[2:]))
        handle, *rows = fn(*flat)
        rows = [r.reshape(axis_size, r.shape[0] // axis_size, *r.shape[1:]) for r in rows]
        return (handle, *rows), (False, *[True] * len(rows))

    return fn
