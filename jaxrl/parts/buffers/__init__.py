"""On-device replay buffers: pure functions over pytree states, jittable and vmappable.

- `uniform`: circular buffer of arbitrary pytree items, uniform sampling.
- `prioritized`: proportional prioritized replay over a sum tree (Schaul et al., 2016).
- `nstep`: a sliding window that turns one-step rows into n-step transitions, correct across
  termination and truncation.
- `frames`: stacked image observations (Atari's) kept once per frame as uint8 beside a buffer
  whose items point to them; sampled stacks are rebuilt exactly.
- `segment_frames`: ACER's replayed segments of stacked image observations, each segment
  keeping its frames once as uint8 (a stream its observations are windows of).
"""

from jaxrl.parts.buffers import frames, nstep, prioritized, segment_frames, uniform

__all__ = ["frames", "nstep", "prioritized", "segment_frames", "uniform"]
