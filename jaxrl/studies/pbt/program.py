"""Population-based training's exploit as one compiled program on the member axis.

``exploit(state [padded], source [padded], values {name: [padded]}) -> state``: every member
takes its source member's state (parameters, optimizer state, statistics, a replay buffer) but
keeps its own environments (``carry``: it goes on from where its envs are) and its own PRNG key
(a copy must not repeat its source's draws); then its tuned hyperparameters are set to
``values``. A replay buffer is copied with the learner: the source's buffer holds the data its
parameters were fitted to, and the copy's own new transitions are added to it from there on. The
program is compiled once per population shape (`jaxrl.engine.programs.compiled`), with the
group's member sharding.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from jaxrl.engine import programs
from jaxrl.engine.members import Placed


def exploit_builder():
    """Builder of the exploit program (module docstring)."""

    def build():
        def exploit(state, source, values):
            new = jax.tree.map(lambda x: x[source], state)
            own = {"key": state.key, **({"carry": state.carry} if hasattr(state, "carry") else {})}
            hparams = dataclasses.replace(new.hparams, **values)
            return dataclasses.replace(new, hparams=hparams, **own)

        return exploit

    return build


def apply_exploit(state, member_source: np.ndarray, values: dict[str, np.ndarray],
                  placed: Placed, resolved):
    """``state`` after the exploit of ``member_source [members]`` (each member's source member)
    with tuned hyperparameters ``values {name: [members]}``; padding members keep their own."""
    padded = placed.padded
    size = member_source.shape[0]
    source = np.concatenate([member_source, np.arange(size, padded)]).astype(np.int32)
    hp = jax.device_get(state.hparams)
    full = {name: np.concatenate([v.astype(np.float32),
                                  np.asarray(getattr(hp, name))[size:padded]])
            for name, v in values.items()}
    args = (placed.place(source), {n: placed.place(v) for n, v in full.items()})
    built = programs.compiled(("pbt_exploit", tuple(sorted(values))), resolved.algorithm,
                              resolved.config, resolved.env, resolved.env_params,
                              exploit_builder(), state, *args, sharding=placed.sharding,
                              donate_first=True)
    return built.program(state, *args)
