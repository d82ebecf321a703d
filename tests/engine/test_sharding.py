"""The member axis (configs x seeds) sharded over 2 and 4 (forced host) devices gives the same
per-seed results as 1 device: a sweep of 3 configs x 2 seeds (6 members, padded to 8 on 4)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

SCRIPT = r"""
import json, jax, numpy as np
from jaxrl.engine.members import member_sharding
from jaxrl.studies.sweep.runner import sweep
small = dict(num_envs=4, num_steps=16, update_epochs=2, num_minibatches=2, hidden=(16, 16))
s = sweep("ppo", seeds=2, total_steps=64 * 6, grid={"learning_rate": [1e-3, 3e-3, 1e-2]},
          store=False, progress=False, seed=3, eval_episodes=4, **small)
sharding, padded = member_sharding(6, True)
params = lambda res: [np.asarray(x).tolist() for x in jax.tree.leaves(res.state.params)]
print(json.dumps({"devices": jax.device_count(), "padded": padded,
                  "shards": 1 if sharding is None else len(sharding.device_set),
                  "value_loss": [x.metrics.value_loss.tolist() for x in s.results],
                  "params": [params(x) for x in s.results],
                  "returns": [x.final_eval_return.tolist() for x in s.results]}))
"""


def _run(devices: int) -> dict:
    # the suite's flags (conftest.py) and the device count
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}"
    env = dict(os.environ, XLA_FLAGS=flags.strip())
    # the script imports jax before jaxrl: drop the count this pytest process's jaxrl exported
    for name in ("JAX_NUM_CPU_DEVICES", "JAXRL_SET_JAX_NUM_CPU_DEVICES", "JAXRL_CPU_DEVICES"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _close(a, b):
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def one_device():
    return _run(1)


@pytest.mark.parametrize("devices,padded", [(2, 6), (4, 8)])
def test_sharded_members_match_one_device(devices, padded, one_device):
    """3 configs x 2 seeds = 6 members: split 3 + 3 over 2 devices, padded to 8 over 4."""
    many = _run(devices)
    assert one_device["devices"] == 1 and one_device["shards"] == 1
    assert many["devices"] == devices and many["shards"] == devices
    assert many["padded"] == padded
    np.testing.assert_allclose(many["value_loss"], one_device["value_loss"], rtol=1e-5, atol=1e-6)
    for a, b in zip(one_device["params"], many["params"]):
        _close(a, b)
    np.testing.assert_allclose(many["returns"], one_device["returns"], rtol=1e-5)
