"""The env families: one table, read by everything that sorts an env name.

A family is a set of envs that share default hyperparameters (``jaxrl config ALGO --env NAME``
prints an algorithm's defaults for the env's family). The registry (`envs.registry`), the
algorithms' defaults (`jaxrl.algos.families`), the CLI (``jaxrl envs``, the committed presets)
and the bench judge all read this table, so a family is named here once. The module imports
no JAX (the CLI's parser reads it to print its help fast).

A suite of another library (Playground, Craftax, ...) is one row with a ``prefix``
(``"playground:"``), an ``adapter`` module and the pip ``extra`` that installs it. The adapter
module has two functions, the only code a suite adds:

* ``task_names() -> list[str]``: the suite's task names (imports the suite);
* ``make_task(task, **kwargs) -> (env, params)``: the task as an env of the jaxrl protocol
  (`envs.core`): the suite's own time limit and auto-reset off, jaxrl's on top.

Adding a suite is that module plus one row here (its defaults included): two code files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

Fields = Mapping[str, Any]  # config field -> value


@dataclasses.dataclass(frozen=True, eq=False)  # a row is itself: compared by identity
class Family:
    """One row of the table.

    ``name``: what `family_of` returns; ``doc``: one line for ``jaxrl envs``;
    ``preset_env``: the env whose defaults are committed as ``presets/ALGO/<name>.yaml``;
    ``action_kind``: ``discrete`` or ``continuous``, that env's (which algorithms get a preset);
    ``prefix``: names starting with it belong here (``""``: sorted by `family_of`'s rule);
    ``adapter``: the module with ``task_names`` and ``make_task`` (``""``: the registry builds
    the family's envs itself); ``extra``: the pip extra that installs the suite;
    ``packages``: distributions whose versions every run on the family records;
    ``supported``: ``{distribution: version prefixes}`` the adapter is written for;
    ``facts``: what else every run records about the family (e.g. the physics implementation);
    ``prepared_starts``: the period of `envs.starts.PreparedStarts`, which `make` wraps the
    family's envs in (0: none, a reset computed at every step; the ``prepared_starts`` option
    of `make` overrides it); ``defaults``: ``{algorithm: config fields}``, the family's own defaults (an algorithm not
    named gets the classic-control ones). The built-in families before the suites keep theirs
    in `jaxrl.algos.families`, beside the references they cite.
    """

    name: str
    doc: str
    preset_env: str
    action_kind: str
    prefix: str = ""
    adapter: str = ""
    extra: str = ""
    packages: tuple[str, ...] = ()
    supported: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    facts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    prepared_starts: int = 0
    defaults: Mapping[str, Fields] = dataclasses.field(default_factory=dict)

    def install_hint(self) -> str:
        return f'pip install -e ".[{self.extra}]"' if self.extra else ""


# -- Playground's tuned configs (mujoco_playground/config/dm_control_suite_params.py, 0.2.0) --
# Brax PPO there: 2,048 envs, unrolls of 30, 32 minibatches, 16 epochs, gamma 0.995, Adam 1e-3,
# entropy 0.01, clip 0.3, GAE 0.95, observations normalized, rewards x10, a policy MLP of 4x32
# and a value MLP of 5x256 (swish). jaxrl's PPO has one width for both nets and no reward
# scale key: 4x256 SiLU (swish) for both, and returns normalized instead of rewards x10.
# Brax collects 16 unrolls of 30 per env before an update; here one update per 30 steps. 256
# envs, not 2,048, so that an update (7,680 steps) fits a workstation's short runs; on a GPU,
# ``--set num_envs=2048`` is Playground's.
_PLAYGROUND_PPO: Fields = MappingProxyType(dict(
    num_envs=256, num_steps=30, update_epochs=16, num_minibatches=32, learning_rate=1e-3,
    gamma=0.995, gae_lambda=0.95, clip_eps=0.3, ent_coef=0.01, clip_value_loss=False,
    hidden=(256, 256, 256, 256),
    activation="silu", normalize_obs=True, normalize_reward=True, max_grad_norm=1.0,
    anneal_lr=False))
# Brax SAC there: 128 envs, batch 512, 8 gradient steps per env step round, gamma 0.99,
# Adam 1e-3, a replay of 4M with 8,192 random steps first, observations normalized, a Q MLP
# with LayerNorm. jaxrl's SAC has no observation normalization or LayerNorm key; the replay
# is 1M (4M x 8 seeds does not fit a workstation's memory).
_PLAYGROUND_SAC: Fields = MappingProxyType(dict(
    num_envs=128, buffer_size=1_000_000, batch_size=512, gradient_steps=8,
    learning_starts=8_192, actor_lr=1e-3, critic_lr=1e-3, alpha_lr=1e-3, gamma=0.99,
    log_interval=8))

# -- Craftax_Baselines' PPO (ppo.py: 3x512 tanh MLPs, 4 epochs of 8 minibatches, gamma 0.99,
# GAE 0.8, clip 0.2, entropy 0.01, gradient norm 1, Adam annealed) at the 1M-step settings of
# the Craftax paper as Craftax_Baselines issue 4 reports them: 256 envs x 16 steps, Adam 3e-4
# (ppo.py's own defaults, for 1B steps: 1,024 x 64, 2e-4). Observations are not normalized.
_CRAFTAX_PPO: Fields = MappingProxyType(dict(
    num_envs=256, num_steps=16, update_epochs=4, num_minibatches=8, learning_rate=3e-4,
    anneal_lr=True, gamma=0.99, gae_lambda=0.8, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5,
    max_grad_norm=1.0, hidden=(512, 512, 512), activation="tanh", normalize_obs=False))

# -- Navix's own PPO baselines (navix baselines/rejax/configs/navix_*_1m.yaml, run with rejax):
# 16 envs x 128 steps, 2 epochs of 1 minibatch, Adam 3e-4, gradient norm 1, gamma 0.95, GAE
# 0.9, clip 0.2, entropy 0.01, 64x64 tanh (rejax's default widths), no observation normalization
_NAVIX_PPO: Fields = MappingProxyType(dict(
    num_envs=16, num_steps=128, update_epochs=2, num_minibatches=1, learning_rate=3e-4,
    anneal_lr=False, max_grad_norm=1.0, gamma=0.95, gae_lambda=0.9, clip_eps=0.2,
    ent_coef=0.01, vf_coef=0.5, hidden=(64, 64), activation="tanh", normalize_obs=False))

# -- XLand-MiniGrid: its own baselines are recurrent PPO over thousands of envs (meta-RL); for
# one task at a time, jaxrl's small-grid PPO: 16 envs x 128 steps, 4 epochs of 4 minibatches,
# Adam 3e-4, 64x64 tanh, codes not normalized
_XMINIGRID_PPO: Fields = MappingProxyType(dict(
    num_envs=16, num_steps=128, update_epochs=4, num_minibatches=4, learning_rate=3e-4,
    gamma=0.99, gae_lambda=0.95, ent_coef=0.01, hidden=(64, 64), activation="tanh",
    normalize_obs=False))

# -- Jumanji: its own training code runs A2C with task-specific networks; jaxrl's PPO for its
# flat, masked observations: 64 envs x 32 steps, 4 epochs of 4 minibatches, Adam 3e-4, 128x128
# tanh, and no observation normalization (the action mask must reach the policy as given)
_JUMANJI_PPO: Fields = MappingProxyType(dict(
    num_envs=64, num_steps=32, update_epochs=4, num_minibatches=4, learning_rate=3e-4,
    gamma=0.99, gae_lambda=0.95, ent_coef=0.01, hidden=(128, 128), activation="tanh",
    normalize_obs=False))

# The suites whose reset costs a good part of a step (MJX and brax compute the physics' forward
# kinematics, Jumanji, Navix and XLand-MiniGrid generate a level) start episodes from prepared
# starts, an eighth of the envs drawing theirs at each step (`envs.starts`). Craftax has its
# own optimistic resets.
_STARTS = 8

FAMILIES: tuple[Family, ...] = (
    Family("probe", "the probe ladder (envs.probes): each rung has an exact answer",
           "probe:value", "discrete", prefix="probe:"),
    Family("discrete", "classic control with discrete actions (gymnax)", "CartPole-v1",
           "discrete"),
    Family("continuous", "classic control with continuous actions (gymnax)", "Pendulum-v1",
           "continuous"),
    Family("minatar", "MinAtar games (gymnax): 10x10 grids", "gymnax:Breakout-MinAtar",
           "discrete"),
    Family("atari", "Atari 2600 games through ale-py's XLA interface", "atari:Pong", "discrete",
           prefix="atari:", adapter="envs.atari", extra="atari", packages=("ale-py",)),
    Family("brax", "brax's locomotion envs (MJX physics by default)", "brax:hopper",
           "continuous", prefix="brax:", adapter="envs.brax_adapter",
           packages=("mujoco", "mujoco-mjx"), prepared_starts=_STARTS),
    Family("craftax", "Craftax (symbolic): Crafter-like open-ended survival, optimistic resets",
           "craftax:Craftax-Symbolic-v1", "discrete", prefix="craftax:", adapter="envs.craftax",
           extra="craftax", packages=("craftax",), supported={"craftax": ("1.6.",)},
           defaults={"ppo": _CRAFTAX_PPO}),
    Family("jumanji", "Jumanji: puzzles and combinatorial tasks, action masks honoured",
           "jumanji:Snake-v1", "discrete", prefix="jumanji:", adapter="envs.jumanji",
           extra="jumanji", packages=("jumanji",), supported={"jumanji": ("1.1.",)},
           prepared_starts=_STARTS, defaults={"ppo": _JUMANJI_PPO}),
    Family("navix", "Navix: MiniGrid in JAX (symbolic grids)", "navix:Navix-DoorKey-5x5-v0",
           "discrete", prefix="navix:", adapter="envs.navix", extra="navix",
           packages=("navix",), supported={"navix": ("0.7.",)}, prepared_starts=_STARTS,
           defaults={"ppo": _NAVIX_PPO}),
    Family("xminigrid", "XLand-MiniGrid: XLand tasks from rulesets, and MiniGrid ports",
           "xminigrid:MiniGrid-DoorKey-5x5", "discrete", prefix="xminigrid:",
           adapter="envs.xminigrid", extra="xminigrid", packages=("xminigrid",),
           supported={"xminigrid": ("0.9.",)}, prepared_starts=_STARTS,
           defaults={"ppo": _XMINIGRID_PPO}),
    Family("playground", "MuJoCo Playground: DM Control Suite, locomotion, manipulation (MJX)",
           "playground:CartpoleBalance", "continuous", prefix="playground:",
           adapter="envs.playground", extra="playground",
           packages=("playground", "mujoco", "mujoco-mjx"), supported={"playground": ("0.2.",)},
           facts={"physics": "mjx (impl='jax')"}, prepared_starts=_STARTS,
           defaults={"ppo": _PLAYGROUND_PPO, "sac": _PLAYGROUND_SAC}),
)

BY_NAME: Mapping[str, Family] = MappingProxyType({f.name: f for f in FAMILIES})
NAMES: tuple[str, ...] = tuple(BY_NAME)
#: Every prefix a built-in name may carry (a user's `envs.register` name may not).
RESERVED_PREFIXES: tuple[str, ...] = ("gymnax:", "goal:", *(f.prefix for f in FAMILIES
                                                             if f.prefix))

_CONTINUOUS_CLASSIC = ("Pendulum-v1", "MountainCarContinuous-v0", "goal:PointReach")


def prefixed_family(name: str) -> Family | None:
    """The family whose prefix ``name`` carries, else None."""
    return next((f for f in FAMILIES if f.prefix and name.startswith(f.prefix)), None)


def family_of(name: str) -> str:
    """The family of a built-in env name, from the name alone (nothing is built or imported): a
    prefix names it; a MinAtar game is ``minatar``; the continuous classic-control envs are
    ``continuous``; anything else ``discrete``."""
    family = prefixed_family(name)
    if family is not None:
        return family.name
    if "MinAtar" in name:
        return "minatar"
    if name.removeprefix("gymnax:") in _CONTINUOUS_CLASSIC:
        return "continuous"
    return "discrete"
