"""Twin Delayed DDPG (Fujimoto et al., 2018): the DDPG learner with its three switches on —
clipped double Q (``num_critics=2``: the target takes the min of two critics), delayed actor
and target updates (``policy_delay=2``), and target policy smoothing (``target_policy_noise``).
The learner itself is `jaxrl.algos.ddpg`; this module is TD3's defaults."""

from __future__ import annotations

import dataclasses

from jaxrl.algos import ddpg
from jaxrl.algos.ddpg import DDPGConfig as TD3Config  # noqa: F401  (same fields)
from jaxrl.algos.ddpg import DDPGHparams as TD3Hparams  # noqa: F401
from jaxrl.algos.ddpg import DDPGStatic as TD3Static  # noqa: F401

TD3_SWITCHES = dict(num_critics=2, policy_delay=2, target_policy_noise=True)


def default_config(env_name: str) -> ddpg.DDPGConfig:
    return ddpg.default_config(env_name).replace(**TD3_SWITCHES)


ALGORITHM = dataclasses.replace(ddpg.ALGORITHM, name="td3", default_config=default_config)
