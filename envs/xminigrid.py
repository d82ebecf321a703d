"""XLand-MiniGrid's envs in the jaxrl env protocol (the ``xminigrid`` extra).

    env, params = envs.make("xminigrid:XLand-MiniGrid-R1-9x9")
    env, params = envs.make("xminigrid:MiniGrid-DoorKey-5x5")

XLand-MiniGrid's ``step`` does not reset and keeps termination (``discount`` 0) and its time
limit (``max_steps``, also the scale of its reward ``1 - 0.9 t / max_steps``) apart, so the
adapter reads them straight: ``terminated`` is the goal reached, ``truncated`` the limit;
jaxrl's auto-reset and ``final_observation`` come from `envs.core.Environment`. Observations
are the agent's view, ``[view, view, 2]`` (tile and colour codes), as float32. The limit is
XLand-MiniGrid's own (static there: ``params.episode_length`` reads it).

**Rulesets.** An XLand task's goal and rules come from a ruleset, drawn afresh at every reset
from a set. XLand-MiniGrid downloads its benchmark sets (``trivial-21k``, ``small-1m``, ...)
from the Hugging Face hub at first use. ``rulesets=`` picks the set:

* a path, or ``$JAXRL_XLAND_RULESETS``: a set saved by XLand-MiniGrid (a bz2 pickle of
  ``goals``, ``rules``, ``init_tiles``, ``num_rules``), read from disk;
* a benchmark name: XLand-MiniGrid's own loader (its cache, else the download); offline and
  not cached, one line saying so;
* ``"generated"`` (the default without the variable): 64 single-goal tasks made here, "pick
  up the <colour> <object>" with two other objects in the room and no rules, so XLand tasks
  run offline. Which set a task got is one line on stderr when it is built.

The MiniGrid ports (``MiniGrid-...``) need no ruleset.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.core import Environment, EqualByConstruction, cast_like, raw_key
from envs.spaces import Box, Discrete

#: The environment variable naming a ruleset file for XLand tasks.
RULESETS_ENV = "JAXRL_XLAND_RULESETS"
GENERATED = "generated"


class RulesetsUnavailableError(ValueError):
    """A named ruleset set that is neither cached nor downloadable here."""


def task_names() -> list[str]:
    """Every env XLand-MiniGrid registers."""
    import xminigrid

    return sorted(xminigrid.registered_environments())


@struct.dataclass
class XMiniGridParams:
    inner: Any  # XLand-MiniGrid's params (its time limit is static there)
    rulesets: Any = None  # an XLand-MiniGrid Benchmark (XLand tasks), else None

    @property
    def episode_length(self) -> int:
        return int(self.inner.max_steps)


@struct.dataclass
class XMiniGridState:
    timestep: Any  # XLand-MiniGrid's TimeStep


class XMiniGridEnv(EqualByConstruction, Environment):
    """An XLand-MiniGrid env; see the module docstring. Static: close over it in ``jit``."""

    def __init__(self, task: str, rulesets: Any = None):
        import xminigrid

        self.task, self.name = task, f"xminigrid:{task}"
        self._env, inner = xminigrid.make(task)
        self.xland = task.startswith("XLand")
        self.rulesets_source = _rulesets_source(rulesets) if self.xland else None
        bench = _load_rulesets(self.rulesets_source) if self.xland else None
        if self.xland:  # which set: one line, once per built env
            print(f"{self.name}: rulesets {_describe(self.rulesets_source)}", file=sys.stderr)
        self._default = XMiniGridParams(inner=inner, rulesets=bench)
        self.obs_shape = tuple(int(d) for d in self._env.observation_shape(inner))
        self.num_actions = int(self._env.num_actions(inner))

    def __repr__(self) -> str:
        return f"XMiniGridEnv({self.task!r})"

    @property
    def default_params(self) -> XMiniGridParams:
        return self._default

    def observation_space(self, params: Any = None) -> Box:
        return Box(low=0.0, high=255.0, shape=self.obs_shape)

    def action_space(self, params: Any = None) -> Discrete:
        return Discrete(self.num_actions)

    def reset_env(self, key: jax.Array, params: XMiniGridParams):
        key = raw_key(key)
        inner = params.inner
        if self.xland:
            rule_key, key = jax.random.split(key)
            inner = inner.replace(ruleset=params.rulesets.sample_ruleset(rule_key))
        timestep = self._env.reset(inner, key)
        return jnp.asarray(timestep.observation, jnp.float32), XMiniGridState(timestep)

    def step_env(self, key: jax.Array, state: XMiniGridState, action: jax.Array,
                 params: XMiniGridParams):
        del key  # the dynamics are deterministic; the goal and rules live in the state
        timestep = self._env.step(params.inner, state.timestep, jnp.asarray(action, jnp.int32))
        timestep = cast_like(timestep, state.timestep)  # keep the carry's dtypes
        last = timestep.step_type == 2  # StepType.LAST
        terminated = last & (timestep.discount == 0)
        truncated = last & (timestep.discount > 0)
        return (jnp.asarray(timestep.observation, jnp.float32), XMiniGridState(timestep),
                jnp.asarray(timestep.reward, jnp.float32), terminated, truncated, {})


def _rulesets_source(rulesets: Any) -> str:
    """The option, else ``$JAXRL_XLAND_RULESETS``, else `GENERATED`."""
    if rulesets is None:
        return os.environ.get(RULESETS_ENV) or GENERATED
    return str(rulesets)


def _describe(source: str) -> str:
    if source == GENERATED:
        return (f"generated here (64 'pick up the object' tasks, no rules; {RULESETS_ENV}=FILE "
                "or env option rulesets=NAME for XLand-MiniGrid's sets)")
    return f"from {source}"


def _load_rulesets(source: str):
    """The ruleset set named by ``source`` (module docstring) as an XLand-MiniGrid Benchmark."""
    from xminigrid import benchmarks

    if source == GENERATED:
        return generated_rulesets()
    if os.path.isfile(source):
        return benchmarks.load_benchmark_from_path(source)
    if source not in benchmarks.NAME2HFFILENAME:
        raise ValueError(f"rulesets={source!r} is neither a file nor one of XLand-MiniGrid's "
                         f"sets ({', '.join(benchmarks.NAME2HFFILENAME)}) nor 'generated'")
    try:
        return benchmarks.load_benchmark(source)
    except OSError as err:  # urllib's URLError is an OSError: no network
        raise RulesetsUnavailableError(
            f"XLand-MiniGrid's ruleset set {source!r} is not cached in "
            f"{benchmarks.DATA_PATH} and could not be downloaded ({type(err).__name__}): set "
            f"{RULESETS_ENV} to a local copy, or use rulesets='generated'") from None


def generated_rulesets(count: int = 64, seed: int = 0):
    """``count`` single-goal rulesets made offline: hold one coloured object (XLand-MiniGrid's
    ``AgentHoldGoal``), two other objects in the room, no rules."""
    from xminigrid.benchmarks import Benchmark
    from xminigrid.core.constants import TILES_REGISTRY, Colors, Tiles
    from xminigrid.core.goals import AgentHoldGoal
    from xminigrid.core.rules import EmptyRule

    objects = (Tiles.BALL, Tiles.SQUARE, Tiles.PYRAMID, Tiles.KEY, Tiles.STAR, Tiles.HEX)
    colors = (Colors.RED, Colors.GREEN, Colors.BLUE, Colors.PURPLE, Colors.YELLOW, Colors.GREY)
    tiles = np.asarray([np.asarray(TILES_REGISTRY[o, c]) for o in objects for c in colors])
    rng = np.random.default_rng(seed)
    picks = np.stack([rng.choice(len(tiles), size=3, replace=False) for _ in range(count)])
    goals = np.stack([np.asarray(AgentHoldGoal(tile=jnp.asarray(tiles[p[0]])).encode())
                      for p in picks])
    rule = np.asarray(EmptyRule().encode())[None]
    return Benchmark(goals=jnp.asarray(goals, jnp.uint8),
                     rules=jnp.asarray(np.repeat(rule[None], count, axis=0), jnp.uint8),
                     init_tiles=jnp.asarray(tiles[picks], jnp.uint8),
                     num_rules=jnp.zeros(count, jnp.int32))


def make_task(task: str, rulesets: Any = None) -> tuple[XMiniGridEnv, XMiniGridParams]:
    """``xminigrid:<task>``; ``rulesets`` for XLand tasks (module docstring)."""
    key = (task, _rulesets_source(rulesets) if task.startswith("XLand") else None)
    if key not in _BUILT:
        env = XMiniGridEnv(task, rulesets)
        env._make_args = key
        _BUILT[key] = env
    env = _BUILT[key]
    return env, env.default_params


_BUILT: dict[tuple, XMiniGridEnv] = {}  # built envs by make arguments (they hold no state)
