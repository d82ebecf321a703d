"""Every metric every built-in algorithm writes, at every verbosity, is in the catalogue
(`jaxrl.parts.metric_names`) with its meaning; the NaN guard skips exactly the metrics the catalogue
says may be NaN. The names are read from the traced train step (`jax.eval_shape`): nothing
compiles."""

import jax
import numpy as np
import pytest

from jaxrl import algos
from jaxrl.engine.spec import resolve
from jaxrl.parts.diagnostics import LEVELS, first_non_finite
from jaxrl.parts.metric_names import METRICS, lookup, nan_allowed


def default_case(name: str) -> tuple[str, str, dict]:
    """An algorithm's own case, from the registry: its first action kind's env, no overrides."""
    kinds = algos.get(name).action_kinds
    return name, "CartPole-v1" if "discrete" in kinds else "Pendulum-v1", {}


# the code paths that add metrics beyond an algorithm's default case (adding an algorithm adds
# its default case by itself, `default_case`)
EXTRA_CASES = [("ppo", "Pendulum-v1", {"popart": True}),
               ("ppo", "CartPole-v1", {"rnn": "gru", "normalize_reward": True}),
               ("trpo", "Pendulum-v1", {}), ("dqn", "CartPole-v1", {"prioritized": True}),
               ("iqn", "CartPole-v1", {"double_q": True})]
CASES = [default_case(name) for name in sorted(algos.BUILT_IN)] + EXTRA_CASES


def metric_names(algo: str, env_name: str, verbosity: str, **overrides) -> set[str]:
    algorithm, env, env_params, config, _ = resolve(algo, env_name, 10_000, 1, None,
                                                    verbosity=verbosity, **overrides)
    state = jax.eval_shape(lambda k: algorithm.init(k, env, env_params, config),
                           jax.random.key(0))
    _, metrics = jax.eval_shape(
        lambda s: algorithm.train_step(s, config.static(), env, env_params), state)
    return set(metrics)


@pytest.mark.parametrize(("algo", "env_name", "overrides"), CASES,
                         ids=[f"{a}-{e}-{'-'.join(o)}" for a, e, o in CASES])
def test_every_metric_is_in_the_catalogue(algo, env_name, overrides, request):
    if algo in ("bc", "gail"):
        overrides = {**overrides, "demos": request.getfixturevalue("cartpole_expert")[2]}
    for verbosity in LEVELS:
        unknown = sorted(n for n in metric_names(algo, env_name, verbosity, **overrides)
                         if lookup(n) is None)
        assert not unknown, (f"{algo} writes metrics the catalogue does not name (add them to "
                             f"jaxrl/parts/metric_names.py): {unknown}")


def test_described_and_part_names_are_found_and_unknown_ones_are_not():
    assert lookup("advantage_std").meaning.startswith("std of GAE advantages")
    assert lookup("critic_grad_norm").meaning == "the critics' gradient global norm (before clipping)"
    assert lookup("replay_q_loss").nan_allowed and not lookup("q_loss").nan_allowed
    assert lookup("episode_return_mean").nan_allowed
    assert lookup("made_up_metric") is None and lookup("replay_made_up") is None
    assert lookup("actor_entropy") is None  # a part's prefix only on losses and gradients
    assert all(m.meaning for m in METRICS.values())


def test_the_nan_guard_skips_exactly_what_may_be_nan():
    nan = np.full((2, 3), np.nan)
    fine = np.zeros((2, 3))
    for name in ("eval_return", "episode_return_mean", "residual_variance", "replay_q_loss"):
        assert nan_allowed(name)
        assert first_non_finite({name: nan, "loss": fine}) is None
    for name in ("loss", "q_loss", "grad_norm", "my_own_metric"):
        assert first_non_finite({name: nan, "eval_return": nan}) == (name, 0, 0)
