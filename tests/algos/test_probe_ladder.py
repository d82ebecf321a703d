"""Every algorithm up the probe ladder (envs/probes.py): feed-forward PPO climbs all ten rungs; the others
the rungs that separate working from broken learners of their kind, each including its
truncation rung. (`jaxrl probe ALGO` runs every rung; docs/measured.md has the measured ladders.)"""

import pytest

from envs.probes import PROBES
from jaxrl import algos
from jaxrl.studies.probe import run_ladder, supports


def rungs_of(name: str) -> list[str]:
    """The rungs that separate working from broken learners of ``name``'s kinds, from the
    registry: a discrete learner's per-observation action choice, bootstrapping through
    truncation and credit over several steps; a continuous learner's action choice, and its
    truncation rung when it has no discrete one; none for imitation (no reward to learn)."""
    algorithm = algos.get(name)
    if algorithm.imitation:
        return []
    discrete, continuous = ("discrete" in algorithm.action_kinds,
                            "continuous" in algorithm.action_kinds)
    return ((["probe:obs-action", "probe:truncation"] if discrete else [])
            + (["probe:continuous-obs-action"] if continuous else [])
            + (["probe:continuous-truncation"] if continuous and not discrete else [])
            + (["probe:delayed-reward"] if discrete else []))


# PPO climbs every rung (below); every other built-in algorithm its kinds' rungs
RUNGS = {name: rungs_of(name) for name in sorted(algos.BUILT_IN) if name != "ppo"}


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
