"""Every algorithm up the probe ladder (envs/probes.py): feed-forward PPO climbs all ten rungs; the others
the rungs that separate working from broken learners of their kind, each including its
truncation rung. (`jaxrl probe ALGO` runs every rung; docs/measured.md has the measured ladders.)"""

import pytest

from envs.probes import PROBES
from jaxrl.studies.probe import run_ladder, supports

# On-policy: per-observation action choice, bootstrapping through truncation, continuous
# actions, credit over several steps. Off-policy: discrete rungs for DQN, C51, QR-DQN, IQN and ACER
# (its replayed updates and Retrace targets included), continuous rungs for the actor-critics.
# PQN (Q(lambda) over rollouts, no replay) takes the discrete rungs too.
RUNGS = {
    "vpg": ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
            "probe:delayed-reward"],
    "a2c": ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
            "probe:delayed-reward"],
    "trpo": ["probe:obs-action", "probe:truncation", "probe:continuous-obs-action",
             "probe:delayed-reward"],
    "dqn": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "c51": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "qrdqn": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "iqn": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "pqn": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "acer": ["probe:obs-action", "probe:truncation", "probe:delayed-reward"],
    "ddpg": ["probe:continuous-obs-action", "probe:continuous-truncation"],
    "td3": ["probe:continuous-obs-action", "probe:continuous-truncation"],
    "sac": ["probe:continuous-obs-action", "probe:continuous-truncation"],
}


CASES = [("ppo", probe.name) for probe in PROBES if not probe.needs_memory] + [
    (algo, rung) for algo, rungs in RUNGS.items() for rung in rungs]


def test_ppo_climbs_every_rung():
    """PPO takes both action kinds, so its ladder is all ten rungs (each run below); the memory
    rung joins it for a recurrent policy (tests/algos/test_recurrent.py)."""
    assert [p.rung for p in PROBES if supports("ppo", p)] == list(range(1, 11))
    assert [p.rung for p in PROBES if supports("ppo", p, rnn="gru")] == list(range(1, 12))


# One test per (algorithm, rung), so the rungs spread over the test workers.
@pytest.mark.parametrize("algo, rung", CASES)
def test_probe_rung_passes(algo, rung):
    (result,) = run_ladder(algo, seeds=4, rungs=[rung])
    assert result.name == rung
    assert result.passed, (result.name, result.measured, result.expected)
