"""The programs that change a population's member slots between chunks, each compiled once per
population shape (`jaxrl.engine.programs.compiled`) with the group's member sharding:
population-based training's exploit, and a pruned search's refill.

``exploit(state [padded], source [padded], values {name: [padded]}) -> state``: every member
takes its source member's state (parameters, optimizer state, statistics, a replay buffer) but
keeps its own environments (``carry``: it goes on from where its envs are) and its own PRNG key
(a copy must not repeat its source's draws); then its tuned hyperparameters are set to
``values``. A replay buffer is copied with the learner: the source's buffer holds the data its
parameters were fitted to, and the copy's own new transitions are added to it from there on.

A refill: the group's own init program (compiled already: no new compile) starts every member
afresh from new ``keys`` and ``hparams``, and ``refill(state [padded], fresh [padded], mask
[padded]) -> state`` keeps the fresh state of the members where ``mask`` is set (parameters,
optimizer state, statistics, counters and schedules, envs, replay buffer, PRNG key: the whole
train state, bit for bit what the init program gives) and the others' own, bit for bit. One
shape whichever slots are refilled (no recompile); a refill holds two train states at once for
a moment.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
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


def refill_builder():
    """Builder of the refill's selection: ``(state, fresh, mask [padded]) -> state``."""

    def build():
        def refill(state, fresh, mask):
            pick = lambda new, old: jnp.where(mask.reshape(mask.shape + (1,) * (old.ndim - 1)),
                                              new, old)
            return jax.tree.map(pick, fresh, state)

        return refill

    return build


def apply_refill(state, members: np.ndarray, keys, hparams: list, placed: Placed, resolved):
    """``state`` with ``members [n]`` (member indices) started afresh from ``keys [n]`` (typed
    PRNG keys) and ``hparams`` (``n`` traced-hyperparameter pytrees, as
    ``config.hparams()`` gives them); every other member keeps its state."""
    r, padded = resolved, placed.padded
    mask = np.zeros(padded, bool)
    mask[members] = True
    full_keys = placed.keys.at[jnp.asarray(members)].set(keys) if len(members) else placed.keys
    new = jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *hparams)

    def put(current, rows):
        out = np.array(current)
        out[members] = rows.astype(out.dtype)
        return placed.place(jnp.asarray(out))

    full_hp = jax.tree.map(put, jax.device_get(state.hparams), new)
    build = lambda tag, builder, *args, **kw: programs.compiled(
        tag, r.algorithm, r.config, r.env, r.env_params, builder, *args,
        sharding=placed.sharding, **kw)
    init = build(("init",), programs.init_program(r.algorithm, r.config, r.env, r.env_params,
                                                  padded),
                 placed.place(full_keys), full_hp, runs_once=True)  # the group's own
    fresh = init.program(placed.place(full_keys), full_hp)
    mask = placed.place(jnp.asarray(mask))
    refill = build(("refill",), refill_builder(), state, fresh, mask, donate_first=True)
    return refill.program(state, fresh, mask)
