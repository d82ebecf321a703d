"""A user algorithm built from an update and its optimizers on the shared on-policy machinery,
registered by name, trains like a built-in one; built-in names are refused."""

import numpy as np
import pytest

import jaxrl
from jaxrl import algos
from jaxrl.algos import vpg


@pytest.fixture
def my_vpg():
    algorithm = algos.on_policy_algorithm("my_vpg", vpg.VPGConfig, vpg.default_config,
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
