"""What a trained run gives back, in one home:

- `results`:        `TrainResult` (what `jaxrl.train` returns) and `NonFiniteMetricError`.
- `policies`:       the trained policy a run keeps (``policy.npz``) and `StoredPolicy`.
- `demonstrations`: playing a policy's episodes in one jitted loop; recording them as demos.
- `video`:          episode videos of a policy (`Video`).

The engine produces these (it imports this package, never the other way round); the loaders
that bring them back from the run store by run id (`load_policy`, `render`, `demos`,
`load_demos`) are in `jaxrl.api`, beside `train` and `resume`. Evaluation during training is
the engine's, beside the rollout (`jaxrl.parts.evaluate`).
"""
