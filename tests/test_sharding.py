"""The seed axis sharded over 2 (forced host) devices gives the same per-seed results."""

import json
import os
import subprocess
import sys

import numpy as np

SCRIPT = r"""
import json, sys, jax, numpy as np
from jaxrl.driver import train_unrecorded
r = train_unrecorded("ppo", env="CartPole-v1", seeds=4, total_steps=64 * 6, progress=False, seed=3,
          num_envs=4, num_steps=16, update_epochs=2, num_minibatches=2, hidden=(16, 16))
leaf = jax.tree.leaves(r.state.params)[0]
print(json.dumps({"devices": jax.device_count(),
                  "shards": len(leaf.sharding.device_set),
                  "value_loss": r.metrics.value_loss.tolist(),
                  "params": [np.asarray(x).tolist() for x in jax.tree.leaves(r.state.params)]}))
"""


def _run(devices: int) -> dict:
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_two_devices_match_one():
    one, two = _run(1), _run(2)
    assert one["devices"] == 1 and two["devices"] == 2 and two["shards"] == 2
    np.testing.assert_allclose(two["value_loss"], one["value_loss"], rtol=1e-5, atol=1e-6)
    for a, b in zip(one["params"], two["params"]):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5, atol=1e-6)
