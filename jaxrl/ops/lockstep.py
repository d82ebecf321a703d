"""One flag for every member of a program, so that a branch runs once instead of both ways.

The engine maps a program's members with ``jax.vmap(..., axis_name=MEMBER_AXIS)``
(`jaxrl.engine.members.over_members`). Under that map a ``lax.cond`` whose predicate is
batched (one per member) runs both branches for every member and selects; one whose
predicate is the same for the whole program runs only the branch it takes. Members step in
lockstep (the same rounds, updates and warm-up), so a flag that follows the schedule alone is
the same for all of them, but it is batched all the same: `any_member` makes it one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

MEMBER_AXIS = "members"
"""The name of the engine's member map (`jax.vmap`'s ``axis_name``)."""


def any_member(flag: jax.Array) -> jax.Array:
    """``flag`` (a bool scalar per member) as one bool for the program: true where any
    member's is. Outside the engine's member map (one member, which runs unmapped, or a test
    that calls a step directly) it is ``flag`` itself."""
    try:
        return jax.lax.pmax(jnp.asarray(flag, jnp.int32), MEMBER_AXIS) > 0
    except NameError:  # no member map around this trace
        return jnp.asarray(flag)
