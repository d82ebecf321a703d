"""Stored policies and demonstrations: every algorithm acts from the state a run keeps, a stored
policy acts like the run's result, demonstrations round-trip through the store with their
episode boundaries, and bad input is one line."""

import time

import jax
import numpy as np
import pytest

import jaxrl
from jaxrl import algos
from jaxrl.cli import main
from jaxrl.engine.members import seed_keys
from jaxrl.engine.spec import resolve
from jaxrl.runs.store import StoreError
from jaxrl.trained.policies import POLICY_FILE, acting_state

ENVS = {"discrete": "CartPole-v1", "continuous": "Pendulum-v1"}


@pytest.mark.parametrize("name", sorted(algos.ALGORITHMS))
def test_every_algorithm_acts_from_its_acting_state(name, cartpole_expert):
    """The saved state drops buffers, envs, optimizer state, targets and keys; acting (and
    evaluation's policy) must not read any of them. Traced only: no compile."""
    algorithm = algos.get(name)
    env_name = ENVS[algorithm.action_kinds[0]]
    demos = {"demos": cartpole_expert[2]} if algorithm.imitation else {}
    algorithm, env, env_params, config, _ = resolve(name, env_name, 10_000, 2, **demos)
    init = lambda k: algorithm.init(k, env, env_params, config)
    state = jax.eval_shape(jax.vmap(init), seed_keys(0, 2))
    kept = acting_state(jax.tree.map(lambda x: x, state))
    assert getattr(kept, "buffer", None) is None and getattr(kept, "opt_state", None) is None
    one = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), kept)
    obs = jax.ShapeDtypeStruct((3, *env.observation_space(env_params).shape), np.float32)
    policy = algorithm.policy(config.static(), env, env_params)
    for deterministic in (True, False):
        _, action = jax.eval_shape(lambda s, o, d=deterministic: policy.step(
            s, policy.initial(3), o, jax.random.key(0), d), one, obs)
        assert action.shape[0] == 3


@pytest.fixture(scope="module")
def ppo_run(cartpole_expert):
    return cartpole_expert[:2]


def test_a_stored_policy_acts_like_the_result(ppo_run):
    result, runs = ppo_run
    stored = jaxrl.load_policy(result.run_id, runs)
    assert stored.seeds == 2 and stored.algo == "ppo"
    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    for seed in (0, 1):
        np.testing.assert_array_equal(stored.act(obs, seed=seed), result.act(obs, seed=seed))
        key = jax.random.key(7)
        np.testing.assert_array_equal(stored.act(obs, key, seed, deterministic=False),
                                      result.act(obs, key, seed, deterministic=False))
    with pytest.raises(ValueError, match=r"seeds 0\.\.1"):
        stored.act(obs, seed=2)


def test_demonstrations_round_trip_with_whole_episodes(ppo_run, capsys):
    result, runs = ppo_run
    assert main(["demos", result.run_id, "--seed", "1", "--episodes", "6", "--runs-dir",
                 runs]) == 0
    demo_id = capsys.readouterr().out.split(":")[0]
    demos = jaxrl.load_demos(demo_id, runs)
    meta = demos.meta
    assert meta["run_id"] == result.run_id and meta["seed"] == 1 and meta["deterministic"]
    assert meta["episodes"] == 6 and demos.obs.shape == (demos.num_steps, 4)
    assert demos.action.shape == (demos.num_steps,) and demos.action.dtype.kind == "i"
    for e in range(6):
        rows = np.flatnonzero(demos.episode == e)
        np.testing.assert_array_equal(demos.t[rows], np.arange(rows.size))  # whole, in order
        ends = demos.terminated[rows] | demos.truncated[rows]
        assert ends[-1] and not ends[:-1].any()  # ends at its first done, nothing after
        assert demos.reward[rows].sum() == pytest.approx(demos.returns[e])
        assert meta["lengths"][e] == rows.size
    # the recorded actions are the policy's at the recorded observations
    np.testing.assert_array_equal(demos.action, result.act(demos.obs, seed=1))
    # fresh episodes of the deterministic policy score what the final evaluation scored
    assert abs(np.mean(demos.returns) - result.final_eval_return[1]) <= max(
        100.0, 0.5 * result.final_eval_return[1])
    assert main(["runs", "demos", "--runs-dir", runs]) == 0
    assert demo_id in capsys.readouterr().out


def test_every_seed_plays_through_one_program(ppo_run):
    """`play` takes the seed's acting state as the program's argument: a run's seeds share one
    trace (and compile), and each seed still plays its own policy."""
    from jaxrl.trained.demonstrations import PROGRAMS_KEPT, demo_row, play

    result, runs = ppo_run
    stored = jaxrl.load_policy(result.run_id, runs)
    traces = []

    def record(*step):
        traces.append(1)
        return demo_row(*step)

    played = [play(stored, seed, 3, jax.random.key(0), record=record) for seed in (0, 1)]
    assert len(traces) == 1 and len(stored.programs) == 1
    for seed, rows in enumerate(played):
        active = rows["active"].reshape(-1)
        obs = rows["obs"].reshape(-1, 4)[active]
        np.testing.assert_array_equal(rows["action"].reshape(-1)[active],
                                      result.act(obs, seed=seed))
    for _ in range(PROGRAMS_KEPT + 2):  # a new record each call (as a video's): a bounded cache
        play(stored, 0, 1, jax.random.key(0), record=lambda *step: demo_row(*step))
    assert len(stored.programs) == PROGRAMS_KEPT


def test_a_checkpoint_policy_acts_like_its_state(ppo_run, tmp_path):
    """``load_policy(run, checkpoint=folder)``: the newest checkpoint's acting state, with the env
    steps it had trained for; a folder with no usable checkpoint is one line."""
    from jaxrl.engine.checkpoint import Checkpointer

    result, runs = ppo_run
    checkpointer = Checkpointer(tmp_path / "checkpoints", async_save=False)
    checkpointer.save(3, result.state, {"chunks_done": 3})
    checkpointer.close()
    leftover = tmp_path / "checkpoints" / "4.orbax-checkpoint-tmp-1"  # a save in progress
    leftover.mkdir()
    stored = jaxrl.load_policy(result.run_id, runs, checkpoint=tmp_path / "checkpoints")
    time.sleep(1.0)  # a writable checkpointer tidies temporary folders in the background
    assert leftover.is_dir()  # reading never tidies another process's save away
    assert stored.trained_steps == int(np.max(result.state.env_steps)) > 0
    obs = np.random.default_rng(1).normal(size=(32, 4)).astype(np.float32)
    for seed in (0, 1):
        np.testing.assert_array_equal(stored.act(obs, seed=seed), result.act(obs, seed=seed))
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="no usable checkpoint in"):
        jaxrl.load_policy(result.run_id, runs, checkpoint=tmp_path / "empty")
    with pytest.raises(StoreError, match="no checkpoints folder"):
        jaxrl.load_policy(result.run_id, runs, checkpoint=tmp_path / "missing")


def test_bad_policy_and_demo_input_is_one_line(ppo_run, tmp_path, capsys):
    result, runs = ppo_run
    assert main(["demos", "no-such-run", "--runs-dir", runs]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err
    with pytest.raises(StoreError, match="no demonstrations 'nope'"):
        jaxrl.load_demos("nope", runs)
    # a damaged policy file names the run and the file
    import shutil
    copy = tmp_path / "store"
    shutil.copytree(runs, copy)
    path = copy / result.run_id / POLICY_FILE
    path.write_bytes(path.read_bytes()[:100])
    assert main(["demos", result.run_id, "--runs-dir", str(copy)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and POLICY_FILE in err and result.run_id in err
    path.unlink()
    with pytest.raises(StoreError, match="kept no policy"):
        jaxrl.load_policy(result.run_id, str(copy))
