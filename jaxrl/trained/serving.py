"""One seed's trained policy as a serialized JAX program (`jax.export`), to serve without
jaxrl: the program maps raw env observations ``[batch, *obs_shape]`` (any batch size) to env
actions ``[batch, *action_shape]``, with the seed's parameters and observation statistics
(normalization included) inside it, deterministic (the most probable action, or the
deterministic actor).

    result.export_policy("cartpole.jaxpolicy", seed=0)      # or load_policy(run).export_policy

    # anywhere with jax installed, jaxrl not needed:
    import jax, numpy as np
    serve = jax.export.deserialize(open("cartpole.jaxpolicy", "rb").read())
    action = np.asarray(serve.call(obs[None].astype(np.float32)))[0]  # jax.jit(serve.call): faster

The file is the bytes of `jax.export.Exported.serialize`; JAX reads it back in later versions
within its compatibility window (about six months of releases). Recurrent policies carry
memory between calls and are not exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxrl.algos import acting
from jaxrl.runs.files import atomic_write_bytes


def export_policy(policy: acting.Policy, state: Any, obs_shape: tuple,
                  obs_dtype: Any, path: str | Path, platforms: tuple[str, ...] = ("cpu", "cuda")
                  ) -> Path:
    """Serialize ``policy`` (an `acting.Policy`) at one seed's acting ``state`` for observations
    ``[b, *obs_shape]`` of ``obs_dtype`` to ``path``, runnable on each of ``platforms``.
    Returns the path. `ValueError` (one line) for a recurrent policy."""
    if policy.recurrent:
        raise ValueError("a recurrent policy carries memory between calls; export_policy "
                         "serves feed-forward policies only")
    key = jax.random.key(0)  # read by no deterministic policy

    def serve(obs: jax.Array) -> jax.Array:
        return policy.step(state, (), obs, key, True)[1]

    batch = jax.export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((*batch, *tuple(obs_shape)), np.dtype(obs_dtype))
    exported = jax.export.export(jax.jit(serve), platforms=platforms)(spec)
    target = Path(path)
    atomic_write_bytes(target, bytes(exported.serialize()))
    return target
