"""The driver's programs: the fused train equals the chunked driver, one seed runs the program of
several, traced hyperparameters reuse a compiled program and static ones (the chunk length
included) do not, a non-finite metric stops the run naming it, a chunk started before the
host reads the last one's metrics trains exactly as one started after, and the evaluation
program compiles behind the first chunks."""

import dataclasses
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.api import make_train, train
from jaxrl.engine import programs
from jaxrl.engine.members import seed_keys
from jaxrl.trained.results import NonFiniteMetricError


def test_fused_train_matches_chunked_driver():
    kw = dict(num_envs=4, num_steps=16, update_epochs=2, num_minibatches=2, hidden=(16, 16))
    chunked = train("ppo", env="CartPole-v1", seeds=3, total_steps=64 * 12, progress=False,
                    max_chunk_updates=4, seed=7, **kw)
    fused = make_train("ppo", "CartPole-v1", total_steps=64 * 12, **kw)
    state, metrics = jax.jit(jax.vmap(fused))(seed_keys(7, 3))
    for a, b in zip(jax.tree.leaves(chunked.state.params), jax.tree.leaves(state.params)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        chunked.metrics.pivot(index="update", columns="seed", values="value_loss").to_numpy(),
        np.asarray(metrics["value_loss"]).T, rtol=1e-4, atol=1e-6)


def test_single_seed_program_matches_first_seed_of_several():
    """One member runs unbatched (no size-1 vmap); it must train seed 0 exactly as a vmapped
    group of three does, evaluations included (same programs' keys, same chunk folding)."""
    kw = dict(num_envs=4, num_steps=16, update_epochs=2, num_minibatches=2, hidden=(16, 16),
              total_steps=64 * 8, progress=False, max_chunk_updates=2, eval_every=1,
              eval_episodes=4, seed=3, shard_seeds=False)
    one = train("ppo", env="CartPole-v1", seeds=1, **kw)
    three = train("ppo", env="CartPole-v1", seeds=3, **kw)
    for a, b in zip(jax.tree.leaves(one.state.params), jax.tree.leaves(three.state.params)):
        assert a.shape[0] == 1 and b.shape[0] == 3
        np.testing.assert_allclose(np.asarray(a)[0], np.asarray(b)[0], rtol=1e-5, atol=1e-6)
    first = three.evaluations[three.evaluations.seed == 0].reset_index(drop=True)
    assert len(one.evaluations) == len(first) == 4
    np.testing.assert_allclose(one.evaluations.eval_return, first.eval_return)


def test_changing_a_traced_hyperparameter_does_not_recompile():
    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda name, *_a, **_k: compiles.append(name) if "backend_compile" in name else None)
    kw = dict(num_envs=2, num_steps=8, hidden=(8,), progress=False, seeds=2, total_steps=16 * 4)
    programs.forget()  # the first train must compile, whatever this worker ran before
    first = train("ppo", env="probe:action", learning_rate=1e-3, **kw)
    before = len(compiles)
    second = train("ppo", env="probe:action", learning_rate=3e-2, clip_eps=0.1, gamma=0.5, **kw)
    assert len(compiles) == before, compiles[before:]
    assert first.compile_seconds > 0 and second.compile_seconds == 0
    lr = second.metrics.groupby("update").learning_rate.first().to_numpy()
    assert lr[0] == pytest.approx(3e-2)  # the new value really is used
    third = train("ppo", env="probe:action", num_steps=4, **{k: v for k, v in kw.items()
                                                             if k != "num_steps"})
    assert len(compiles) > before and third.compile_seconds > 0  # a static change does compile


@pytest.mark.parametrize("evaluations", [{}, {"eval_episodes": 0}],
                         ids=["each-chunk-after-the-host", "chunks-started-ahead"])
def test_non_finite_metric_stops_with_named_metric(evaluations):
    with pytest.raises(NonFiniteMetricError) as err:
        train("ppo", env="probe:value", seeds=2, total_steps=256 * 6, progress=False,
              max_chunk_updates=2, learning_rate=1e38, **evaluations)  # first step overflows
    msg = str(err.value)
    assert "seed 0" in msg and "update 0" in msg
    metrics = err.value.result.metrics
    assert len(metrics) == 2 * 2  # the chunk that went bad is kept, nothing after it
    named = msg.split("'")[1]
    assert not np.isfinite(metrics[named].iloc[0])


def test_chunks_are_equal_and_leave_the_fewest_updates_undone():
    from jaxrl.engine.loop import chunk_length

    assert chunk_length(30, 50) == 30  # one chunk
    assert chunk_length(2442, 50) == 37  # the largest divisor in [12, 50]
    assert chunk_length(1000, 50) == 50
    # 2441 (2.5M steps in PPO's updates of 1024: the Atari suite at a quarter of its budget) is
    # prime: chunks of 40 leave 1 update undone, where 49 x 49 left 40
    assert chunk_length(2441, 50) == 40
    assert chunk_length(9765, 50) == 45  # the full 10M steps: 217 chunks, none undone
    for n in range(51, 3000):
        k = chunk_length(n, 50)
        assert 12 <= k <= 50 and n % k <= min(n % j for j in range(12, 51))


def test_program_cache_keys_on_chunk_length():
    """Same config, env and seeds but a different chunk length must not reuse the program.
    The process's programs are dropped first: another test in the same worker may have built
    either program already (under ``--dist worksteal`` one did, and ``b`` compiled nothing)."""
    programs.forget()
    kw = dict(seeds=2, total_steps=256 * 6, progress=False, hidden=(8,))
    a = train("ppo", env="probe:value", max_chunk_updates=6, **kw)
    b = train("ppo", env="probe:value", max_chunk_updates=2, **kw)
    assert len(a.metrics) == len(b.metrics) == 2 * 6
    assert b.compile_seconds > 0


def test_the_process_keeps_only_the_most_recent_programs(monkeypatch):
    """Each kept executable holds memory mappings (a process may have 65,530): the in-process
    cache keeps the `MAX_PROGRAMS` most recently used, and `forget` drops them all."""
    from collections import OrderedDict
    from types import SimpleNamespace

    import jax.numpy as jnp

    from jaxrl.engine import programs

    monkeypatch.setattr(programs, "PROGRAMS", OrderedDict())
    monkeypatch.setattr(programs, "MAX_PROGRAMS", 2)
    algo = SimpleNamespace(name="stand-in")
    config = SimpleNamespace(static_key=lambda: ("static",))
    x = jnp.ones(3)

    def get(n):
        return programs.compiled((f"add{n}",), algo, config, "env", None,
                                 lambda: (lambda v: v + n), x)

    first = get(1).program
    get(2)
    hit = get(1)
    assert hit.program is first and hit.seconds == 0.0 and hit.phases == {}  # a hit, now the most recent
    get(3)  # evicts add2, the least recently used
    assert [k[0][0] for k in programs.PROGRAMS] == ["add1", "add3"]
    again = get(2)
    assert float(again.program(x)[0]) == 3.0 and programs.COMPILED["add2"] >= 2  # compiled again
    assert set(again.phases) == {"trace", "lower", "compile"} and all(
        t >= 0 for t in again.phases.values())
    programs.forget()
    assert not programs.PROGRAMS


def test_non_finite_physics_stops_naming_the_env():
    """An env that reports ``info["env_nonfinite"]`` (Playground's physics turning NaN) stops
    the run with a message naming the env, not a loss the NaN would reach later."""
    import envs
    from envs.wrappers import Wrapper

    class FaultyPhysics(Wrapper):
        def step(self, key, state, action, params=None):
            obs, state, reward, term, trunc, info = self.env.step(key, state, action, params)
            return obs, state, reward, term, trunc, {**info, "env_nonfinite": jnp.bool_(True)}

    inner, _ = envs.make("probe:value")
    faulty = FaultyPhysics(inner)
    envs.register("test:faulty-physics", lambda: (faulty, None))
    with pytest.raises(NonFiniteMetricError) as err:
        train("ppo", env="test:faulty-physics", seeds=2, total_steps=256 * 4, progress=False,
              store=False, max_chunk_updates=2)
    msg = str(err.value)
    assert "physics state of test:faulty-physics became non-finite" in msg
    assert "seed 0" in msg and "update 0" in msg


def test_a_chunk_started_ahead_trains_exactly_as_one_started_after_the_host():
    """Without evaluation each chunk starts before the host reads the last one's metrics;
    evaluating every chunk starts each after (its state is read). The training is the same."""
    kw = dict(seeds=2, total_steps=64 * 8, progress=False, store=False, max_chunk_updates=2,
              num_envs=4, num_steps=16, update_epochs=1, num_minibatches=2, hidden=(8,), seed=3)
    ahead = train("ppo", env="CartPole-v1", eval_episodes=0, **kw)
    after = train("ppo", env="CartPole-v1", eval_every=1, eval_episodes=2, **kw)
    for a, b in zip(jax.tree.leaves(ahead.state.params), jax.tree.leaves(after.state.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    cols = ["seed", "update", "value_loss", "episode_return_mean"]
    np.testing.assert_array_equal(ahead.metrics[cols].to_numpy(), after.metrics[cols].to_numpy())


def test_the_next_chunk_starts_before_the_host_reads_this_ones_metrics(monkeypatch):
    from jaxrl.engine import loop

    events = []
    build = loop.build_programs

    def logged_build(*args, **kwargs):
        progs, state = build(*args, **kwargs)
        chunk_fn = progs.chunk_fn

        def logged(state):
            events.append("run")
            return chunk_fn(state)
        return dataclasses.replace(progs, chunk_fn=logged), state

    get = jax.device_get
    monkeypatch.setattr(loop, "build_programs", logged_build)
    monkeypatch.setattr(loop.jax, "device_get", lambda x: (events.append("get"), get(x))[1])
    train("ppo", env="probe:value", seeds=2, total_steps=256 * 8, progress=False, store=False,
          max_chunk_updates=2, eval_episodes=0, hidden=(8,))
    assert events == ["run", "run", "get", "run", "get", "run", "get", "get"]


def test_the_evaluation_program_is_built_while_the_first_chunks_run(monkeypatch):
    """The run starts its chunks once init and chunk are built; the evaluation program is
    traced, lowered and compiled behind them (here neither its lowering nor its compile may
    start before the first chunk has reached the host), and the run waits for it only at its
    first evaluation, in its compile seconds."""
    first_chunk = threading.Event()
    started_after_a_chunk = []
    lower, compile_lowered = programs.lower, programs.compile_lowered

    def lowered_later(tag, *args, **kw):
        if tag[0] == "eval":
            started_after_a_chunk.append(("lower", first_chunk.wait(timeout=60)))
        return lower(tag, *args, **kw)

    def held(pending):
        if any(isinstance(p, programs.Lowered) and p.tag[0] == "eval" for p in pending.values()):
            started_after_a_chunk.append(("compile", first_chunk.wait(timeout=60)))
        return compile_lowered(pending)

    monkeypatch.setattr(programs, "lower", lowered_later)
    monkeypatch.setattr(programs, "compile_lowered", held)
    result = train("ppo", env="CartPole-v1", seeds=2, total_steps=64 * 4, progress=False,
                   store=False, max_chunk_updates=1, eval_every=2, eval_episodes=2,
                   num_envs=4, num_steps=16, update_epochs=1, num_minibatches=1,
                   hidden=(8, 3),  # a shape no other test builds: every program is lowered here
                   on_chunk=lambda record: first_chunk.set())
    assert started_after_a_chunk == [("lower", True), ("compile", True)]
    assert set(result.compile_parts) == {"init", "chunk", "eval"}
    assert result.compile_parts["eval"] > 0 and len(result.final_eval_return) == 2
    waited = result.compile_phases["eval"]["waited"]  # in the run's wait for its programs
    assert 0 <= waited <= result.compile_seconds
