"""ACER (Wang et al., 2017): its algorithm (`algorithm`, reads like the paper's pseudocode), its
config (`config`: static and traced fields, each env family's defaults) and its replay of whole
segments (`segments`: the forms a segment is stored in). One algorithm with a replay of its own,
so a package of its own beside the family kits.
"""

from jaxrl.algos.acer.algorithm import (
    ALGORITHM,
    ACERState,
    Learner,
    collect_segments,
    init,
    make_network,
    make_policy,
    memory_model,
    optimizer,
    replay_count,
    replay_updates,
    train_step,
    update,
)
from jaxrl.algos.acer.config import ACERConfig, ACERHparams, ACERStatic, default_config
from jaxrl.algos.acer.segments import Segment

__all__ = [
    "ALGORITHM",
    "ACERConfig",
    "ACERHparams",
    "ACERState",
    "ACERStatic",
    "Learner",
    "Segment",
    "collect_segments",
    "default_config",
    "init",
    "make_network",
    "make_policy",
    "memory_model",
    "optimizer",
    "replay_count",
    "replay_updates",
    "train_step",
    "update",
]
