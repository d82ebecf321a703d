"""A user algorithm built from an update and its optimizers on the shared on-policy machinery,
registered by name, trains like a built-in one; built-in names are refused."""

import re
from pathlib import Path

import numpy as np
import pytest

import jaxrl
from jaxrl import algos
from jaxrl.algos import vpg
from jaxrl.algos.algorithm import KITS


@pytest.fixture
def my_vpg():
    algorithm = algos.onpolicy.algorithm("my_vpg", vpg.VPGConfig, vpg.default_config,
                                          vpg.update, vpg.optimizers)
    algos.register(algorithm)
    yield algorithm
    algos.ALGORITHMS.pop("my_vpg")


def test_a_registered_algorithm_trains_like_the_built_in_one(my_vpg):
    kw = dict(env="CartPole-v1", seeds=2, total_steps=2048, progress=False, store=False,
              num_envs=4, num_steps=64)
    mine, theirs = jaxrl.train("my_vpg", **kw), jaxrl.train("vpg", **kw)
    np.testing.assert_allclose(mine.metrics["policy_loss"], theirs.metrics["policy_loss"],
                               rtol=1e-5, atol=1e-6)
    assert mine.algo == "my_vpg"


def test_built_in_names_are_refused():
    with pytest.raises(ValueError, match="built-in"):
        algos.register(algos.get("ppo"))
    with pytest.raises(TypeError):
        algos.register("ppo")


def test_every_built_in_algorithm_came_from_a_kit():
    """One construction path: each family's kit, or `standalone` for an algorithm with its own
    train step; no module builds an `Algorithm` by hand."""
    for name in algos.BUILT_IN:
        assert algos.get(name).kit in KITS, name
    root = Path(algos.__file__).parent
    builders = {"algorithm.py", "onpolicy/kit.py", "offpolicy/kit.py"}
    by_hand = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if str(p.relative_to(root)) not in builders
                     and re.search(r"(?<![\w.])Algorithm\(", p.read_text()))
    assert not by_hand, by_hand
