"""DQN, DDPG, TD3 and SAC up the probe ladder: discrete rungs for DQN, continuous rungs for the
actor-critics, each including its truncation rung. (`jaxrl probe ALGO` runs every rung.)"""

import pytest

from jaxrl.probe import run_ladder

RUNGS = {
    "dqn": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "ddpg": ["probe:continuous-obs-action", "probe:continuous-truncation"],
    "td3": ["probe:continuous-obs-action", "probe:continuous-truncation"],
    "sac": ["probe:continuous-obs-action", "probe:continuous-truncation"],
}


@pytest.mark.parametrize("algo", list(RUNGS))
def test_probe_rungs_pass(algo):
    results = run_ladder(algo, seeds=4, rungs=RUNGS[algo])
    assert [r.name for r in results] == RUNGS[algo]
    failed = [(r.name, r.measured, r.expected) for r in results if not r.passed]
    assert not failed, failed
