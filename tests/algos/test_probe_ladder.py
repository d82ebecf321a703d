"""Every algorithm up the probe ladder (envs/probes.py): PPO climbs all ten rungs; the others
the rungs that separate working from broken learners of their kind, each including its
truncation rung. (`jaxrl probe ALGO` runs every rung; see the README for the measured ladders.)"""

import pytest

from jaxrl.probe import run_ladder

# On-policy: per-observation action choice, bootstrapping through truncation, continuous
# actions, credit over several steps. Off-policy: discrete rungs for DQN, continuous rungs for
# the actor-critics.
RUNGS = {
    "vpg": ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
            "probe:delayed-reward"],
    "a2c": ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
            "probe:delayed-reward"],
    "trpo": ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
             "probe:delayed-reward"],
    "dqn": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "ddpg": ["probe:continuous-obs-action", "probe:continuous-truncation"],
    "td3": ["probe:continuous-obs-action", "probe:continuous-truncation"],
    "sac": ["probe:continuous-obs-action", "probe:continuous-truncation"],
}


def test_ppo_climbs_every_rung():
    results = run_ladder("ppo", seeds=4)
    assert [r.rung for r in results] == list(range(1, 11))
    failed = [(r.name, r.measured, r.expected) for r in results if not r.passed]
    assert not failed, failed


@pytest.mark.parametrize("algo", list(RUNGS))
def test_probe_rungs_pass(algo):
    results = run_ladder(algo, seeds=4, rungs=RUNGS[algo])
    assert [r.name for r in results] == RUNGS[algo]
    failed = [(r.name, r.measured, r.expected) for r in results if not r.passed]
    assert not failed, failed
