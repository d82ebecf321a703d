"""VPG, A2C and TRPO up the probe ladder (PPO's full ladder is in test_ppo.py)."""

import pytest

from jaxrl.probe import run_ladder

# The rungs that separate working from broken on-policy learners: per-observation action
# choice, bootstrapping through truncation, continuous actions, credit over several steps.
# (`jaxrl probe vpg|a2c|trpo` runs all nine; see the README for the measured ladders.)
RUNGS = ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
         "probe:delayed-reward"]


@pytest.mark.parametrize("algo", ["vpg", "a2c", "trpo"])
def test_probe_rungs_pass(algo):
    results = run_ladder(algo, seeds=4, rungs=RUNGS)
    assert [r.name for r in results] == RUNGS
    failed = [(r.name, r.measured, r.expected) for r in results if not r.passed]
    assert not failed, failed
