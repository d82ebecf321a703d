"""Named presets: a reference's own configuration, or a preset jaxrl tuned for one task, each
config key's value with where it comes from.

A preset is written out as ``presets/ALGO/NAME.yaml`` (`jaxrl.cli.discover.preset_files`),
every key of the algorithm's config, the named keys with their source as a comment, and is
used by name (`jaxrl.presets`): ``jaxrl train ppo --env brax:hopper --config
ppo/baselines-mujoco``, or ``preset: ppo/baselines-mujoco`` in a benchmark suite entry.

``base`` says what the keys a preset does not name are: ``"class"``, the config class's own
defaults (a reference's configuration, apart from jaxrl's tuning: a reference preset names
every key that matters to it), or ``"family"``, jaxrl's defaults for the preset's ``env``
(`jaxrl.algos.families`: a tuned preset that changes a few of them). ``absent`` lists the
reference's settings jaxrl has no key for: what the preset cannot reproduce.

Sources were read from the references' code at these paths (openai/baselines at ea25b9e,
openai/spinningup at 038665d).

A module per reference (`baselines`, `spinningup`, `classic`: jaxrl's tuned presets, CleanRL's
and the Zoo's, `vel`); `PRESETS` here names them all.
"""

from __future__ import annotations

from jaxrl.algos.references.baselines import PPO_BASELINES_MUJOCO, TRPO_BASELINES_MUJOCO
from jaxrl.algos.references.classic import (
    DQN_CLEANRL_CLASSIC,
    DQN_ZOO_ACROBOT,
    PPO_MOUNTAINCAR,
    SAC_MOUNTAINCAR_OU,
)
from jaxrl.algos.references.preset import NO_CLIP, Keys, Preset
from jaxrl.algos.references.spinningup import (
    DDPG_SPINNINGUP_MUJOCO,
    PPO_SPINNINGUP_MUJOCO,
    SAC_SPINNINGUP_MUJOCO,
    TD3_SPINNINGUP_MUJOCO,
    TRPO_SPINNINGUP_MUJOCO,
    VPG_SPINNINGUP_MUJOCO,
)
from jaxrl.algos.references.vel import VEL_ATARI

__all__ = ["NO_CLIP", "PRESETS", "VEL_ATARI", "Keys", "Preset"]

PRESETS: dict[str, Preset] = {
    "ppo/baselines-mujoco": PPO_BASELINES_MUJOCO,
    "trpo/baselines-mujoco": TRPO_BASELINES_MUJOCO,
    "vpg/spinningup-mujoco": VPG_SPINNINGUP_MUJOCO,
    "ppo/spinningup-mujoco": PPO_SPINNINGUP_MUJOCO,
    "trpo/spinningup-mujoco": TRPO_SPINNINGUP_MUJOCO,
    "ddpg/spinningup-mujoco": DDPG_SPINNINGUP_MUJOCO,
    "td3/spinningup-mujoco": TD3_SPINNINGUP_MUJOCO,
    "sac/spinningup-mujoco": SAC_SPINNINGUP_MUJOCO,
    "ppo/mountaincar": PPO_MOUNTAINCAR,
    "sac/mountaincar-ou": SAC_MOUNTAINCAR_OU,
    "dqn/cleanrl-classic": DQN_CLEANRL_CLASSIC,
    "dqn/zoo-acrobot": DQN_ZOO_ACROBOT,
}
PRESETS.update({f"{algo}/vel-atari": preset for algo, preset in VEL_ATARI.items()})
