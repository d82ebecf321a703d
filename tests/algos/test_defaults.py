"""Every built-in algorithm's default config for every env family is what it was when the
family tables (`jaxrl.algos.families`) replaced the per-algorithm branches: the committed
snapshot ``defaults_snapshot.json`` holds ``repr`` of each value, so a tuple that became a list
or an int that became a float shows too. Rewrite it, after a deliberate change of defaults, with
``python -m tests.algos.test_defaults``."""

import json
from pathlib import Path

from envs.registry import FAMILIES
from jaxrl import algos
from jaxrl.algos.families import FAMILY_DEFAULTS
from jaxrl.cli.discover import config_rows

SNAPSHOT = Path(__file__).with_name("defaults_snapshot.json")
# one env of each family (and more than one where the family is picked by name)
ENVS = ("CartPole-v1", "Acrobot-v1", "Pendulum-v1", "MountainCarContinuous-v0",
        "gymnax:Breakout-MinAtar", "atari:Pong", "brax:hopper", "probe:value",
        "probe:truncation", "playground:CartpoleBalance", "craftax:Craftax-Symbolic-v1",
        "navix:Navix-DoorKey-5x5-v0", "xminigrid:MiniGrid-DoorKey-5x5", "jumanji:Snake-v1")


def current_defaults() -> dict:
    """``{algo: {env: {"family": family, "config": {key: repr(value)}}}}``."""
    out: dict = {}
    for name in sorted(algos.BUILT_IN):
        for env in ENVS:
            _, family, rows = config_rows(name, env)
            out.setdefault(name, {})[env] = {
                "family": family, "config": {r["key"]: repr(r["value"]) for r in rows}}
    return out


def test_the_defaults_of_every_algorithm_and_family_are_unchanged():
    want = json.loads(SNAPSHOT.read_text())
    got = current_defaults()
    assert sorted(got) == sorted(want)
    for name in want:
        for env in want[name]:
            assert got[name][env] == want[name][env], (name, env)


def test_every_family_declares_its_defaults_once():
    """One table per env family, naming built-in algorithms only."""
    assert sorted(FAMILY_DEFAULTS) == sorted(FAMILIES)
    for family, table in FAMILY_DEFAULTS.items():
        assert set(table) <= algos.BUILT_IN, family


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(current_defaults(), indent=1, sort_keys=True) + "\n")
