"""On-device replay buffers: pure functions over pytree states, jittable and vmappable.

- `uniform`: circular buffer of arbitrary pytree items, uniform sampling.
- `prioritized`: proportional prioritized replay over a sum tree (Schaul et al., 2016).
- `nstep`: a sliding window that turns one-step rows into n-step transitions, correct across
  termination and truncation.
"""

from jaxrl.buffers import nstep, prioritized, uniform

__all__ = ["nstep", "prioritized", "uniform"]
