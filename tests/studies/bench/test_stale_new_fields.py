"""A config field the run did not have (the config classes gained it since) leaves a report
current when the suite asks for its default, and makes it stale when the suite asks for
something else: the run could not have had it."""

from jaxrl.studies.bench.judge import stale_reasons

SUITE = {"dqn/navix:Navix-LavaGapS6-v0": {"total_steps": 1024, "seeds": 8,
                                          "config": {"gamma": 0.9}}}
ROW = {"entry": "dqn/navix:Navix-LavaGapS6-v0", "algo": "dqn", "env": "navix:Navix-LavaGapS6-v0",
       "run_id": "r", "requested_steps": 1024, "seeds": 8, "config": {"gamma": 0.9},
       "run_config": {"gamma": 0.9}}


def suite_with(**config) -> dict:
    entry = SUITE["dqn/navix:Navix-LavaGapS6-v0"]
    return {"dqn/navix:Navix-LavaGapS6-v0": {**entry, "config": {**entry["config"], **config}}}


def test_a_new_field_at_its_default_keeps_the_report_current():
    assert stale_reasons([ROW], suite_with(normalize_obs=False), 1.0) == []


def test_a_new_field_set_otherwise_makes_it_stale():
    (reason,) = stale_reasons([ROW], suite_with(normalize_obs=True), 1.0)
    assert reason.startswith("dqn/navix:Navix-LavaGapS6-v0: its config is not the suite's now")
    assert "'normalize_obs': True" in reason
