"""The Atari adapter (envs/atari.py) speaks the env protocol: terminated vs truncated kept apart
(the frame limit is truncation), same-step reset with the right final observation, a lost life
marked terminal while the game goes on, returns in the game's score over whole games; and
vmapped seeds over one emulator pool equal the seeds run one by one."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("ale_py")

import envs
from envs.atari import PRESETS, AtariEnv, games, rom_name
from envs.wrappers import EpisodeStatistics

N, T = 3, 400


def _rollout(env, key, steps=T, num_envs=N):
    """Random actions for ``steps`` steps of ``num_envs`` envs: per-step arrays ``[T, N]``."""
    return {k: np.asarray(v) for k, v in jax.jit(_rollout_fn(env, steps, num_envs))(key).items()}


@pytest.fixture(scope="module")
def breakout():
    env, _ = envs.make("atari:Breakout", max_frames=1200)  # 300 agent steps, then truncation
    return env, _rollout(env, jax.random.key(0))


def test_registry_names_and_presets():
    env, params = envs.make("atari:Pong", preset="machado")
    assert params is None and env.name == "atari:Pong" and env.settings == PRESETS["machado"]
    assert envs.env_family("atari:Pong") == "atari"
    assert env.observation_space().shape == (84, 84, 4) and env.action_space().n == 6
    assert rom_name("MsPacman") == "ms_pacman" and rom_name("pong") == "pong"
    assert {"breakout", "pong", "seaquest", "enduro", "space_invaders", "qbert",
            "beam_rider"} <= set(games())  # reading 002's seven
    with pytest.raises(ValueError, match="no ROM"):
        AtariEnv("NotAGame")
    with pytest.raises(ValueError, match="unknown Atari preset"):
        AtariEnv("Pong", preset="v6")
    with pytest.raises(TypeError, match="unknown Atari option"):
        AtariEnv("Pong", frameskip=3)


def test_frames_per_step_is_the_frame_skip_through_wrappers():
    """Reports quote Atari budgets in frames too: 4 frames per agent step under both presets,
    an override's own skip, 1 for an env without frames."""
    from envs.core import frames_per_step

    pong, _ = envs.make("atari:Pong")
    assert frames_per_step(pong) == frames_per_step(EpisodeStatistics(pong)) == 4
    assert frames_per_step(envs.make("atari:Pong", frame_skip=2)[0]) == 2
    assert frames_per_step(EpisodeStatistics(envs.make("CartPole-v1")[0])) == 1


def test_frame_limit_is_truncation_not_termination(breakout):
    _, r = breakout
    # every game either ended (terminated) or hit the 1,200-frame (300-step) limit (truncated)
    assert r["trunc"].any() and not (r["trunc"] & r["term"] & ~r["life_lost"]).any()
    assert (r["game_over"] == (r["trunc"] | (r["term"] & ~r["life_lost"]))).all()


def test_same_step_reset_and_final_observation(breakout):
    _, r = breakout
    over = r["game_over"]
    assert over.sum() >= N
    # at a game's end obs is the new game's first stack (older frames still empty) and the
    # final observation the old game's last; elsewhere the two are the same frames
    assert (r["older_mass"][over] == 0).all()
    assert (r["final_mass"][over] != r["obs_mass"][over]).all()
    assert (r["final_mass"][~over] == r["obs_mass"][~over]).all()
    # ALE's extra reset step never shows: a new game's stack holds one frame, and the next
    # step's two (the game moved on; a second reset would show one frame again)
    after = np.roll(over, 1, axis=0) & ~over
    after[0] = False
    assert (r["filled"][over] == 1).all() and (r["filled"][after] == 2).all()


def test_the_pool_thread_count_does_not_change_a_game(breakout):
    """``num_threads`` only spreads the emulators over threads: the same keys give the same
    games, resets and final observations as the default (one thread per usable core)."""
    env, _ = envs.make("atari:Breakout", max_frames=1200, num_threads=1)
    one_thread = _rollout(env, jax.random.key(0))
    for name, values in breakout[1].items():
        np.testing.assert_array_equal(one_thread[name], values, err_msg=name)


def test_usable_cores_is_the_affinity_mask_capped_by_a_cgroup_quota(tmp_path, monkeypatch):
    """Not the host's online processors (``os.cpu_count``, ale-py's hardware_concurrency): the
    CPUs this process may run on, and no more than a CPU quota's worth (rounded up)."""
    from envs import atari

    monkeypatch.setattr(atari.os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(atari.os, "cpu_count", lambda: 224)
    assert atari.usable_cores(tmp_path) == 64  # no cgroup files: the affinity mask
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert atari.usable_cores(tmp_path) == 64
    (tmp_path / "cpu.max").write_text("1600000 100000\n")
    assert atari.usable_cores(tmp_path) == 16
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert atari.usable_cores(tmp_path) == 2
    (tmp_path / "cpu.max").unlink()
    v1 = tmp_path / "cpu,cpuacct"
    v1.mkdir()
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    assert atari.usable_cores(tmp_path) == 64
    (v1 / "cpu.cfs_quota_us").write_text("400000\n")
    assert atari.usable_cores(tmp_path) == 4
    monkeypatch.setattr(atari.os, "sched_getaffinity", lambda pid: {3})
    assert atari.usable_cores(tmp_path) == 1


def test_a_pool_gets_one_thread_per_usable_core_unless_told(monkeypatch):
    """By default a pool of B emulators asks ale-py for min(B, usable cores) threads, not ale-py's
    min(B, online processors); an explicit ``num_threads`` (0: ale-py's own default) is kept.
    The count reaches ale-py: the pool starts that many threads."""
    from envs import atari

    monkeypatch.setattr(atari, "usable_cores", lambda: 1)
    env = AtariEnv("Breakout")
    assert (env.pool_threads(48), env.pool_threads(1)) == (1, 1)
    monkeypatch.setattr(atari, "usable_cores", lambda: 16)
    assert (env.pool_threads(48), env.pool_threads(6)) == (16, 6)
    assert AtariEnv("Breakout", num_threads=0).pool_threads(48) == 0
    assert AtariEnv("Breakout", num_threads=3).pool_threads(48) == 3
    assert envs.make("atari:Breakout", num_threads=5)[0].pool_threads(48) == 5

    asked = []
    real = env._vector_env
    env._vector_env = lambda *a, **kw: asked.append(kw["num_threads"]) or real(*a, **kw)
    monkeypatch.setattr(atari, "usable_cores", lambda: 1)
    tasks = Path("/proc/self/task")
    before = {t.name for t in tasks.iterdir()} if tasks.is_dir() else None
    env._new_pool(4)
    assert asked == [1]
    if before is not None:  # Linux: ale-py started one worker (its own default: min(4, online))
        # the threads that are new, not the count: other tests' threads (XLA's, a finished
        # pool's) may end meanwhile, which the suite's order decides
        assert len({t.name for t in tasks.iterdir()} - before) == 1


def test_life_loss_is_terminal_for_learning_but_the_game_goes_on(breakout):
    _, r = breakout
    lost = r["life_lost"]
    assert lost.any()
    assert (r["term"][lost]).all() and not r["game_over"][lost].any()
    # lives fall by one at a life loss and the game is not reset (no new first frame stack)
    assert (r["older_mass"][lost] > 0).all()


def test_rewards_clipped_for_training_returns_in_game_score(breakout):
    _, r = breakout
    assert set(np.unique(r["reward"])) <= {-1.0, 0.0, 1.0}
    assert (r["reward"] == np.sign(r["true_reward"])).all()
    # the reported return of each finished game is the sum of its true rewards
    for e in range(N):
        start = 0
        for t in np.flatnonzero(r["episode_done"][:, e]):
            assert r["episode_return"][t, e] == pytest.approx(r["true_reward"][start:t + 1, e].sum())
            start = t + 1
    assert not (r["episode_done"] & r["life_lost"]).any()  # a life is not an episode


def test_machado_preset_has_no_life_loss_and_raw_rewards():
    env, _ = envs.make("atari:Breakout", preset="machado", max_frames=1200)
    r = _rollout(env, jax.random.key(1), steps=200, num_envs=2)
    assert not (r["term"] & r["life_lost"]).any()
    assert (r["reward"] == r["true_reward"]).all()


def test_vmapped_seeds_over_one_pool_equal_seed_by_seed():
    """Two members vmapped share one pool of 2 x N emulators; each member's envs are its own,
    so every output equals the run of that member's key alone."""
    env, _ = envs.make("atari:Pong", max_frames=800)
    keys = jax.random.split(jax.random.key(3), 2)
    alone = [_rollout(env, k, steps=220) for k in keys]
    both = {k: np.asarray(v) for k, v in jax.jit(jax.vmap(_rollout_fn(env, 220)))(keys).items()}
    for m in range(2):
        for name in alone[m]:
            np.testing.assert_array_equal(alone[m][name], both[name][m], err_msg=name)


def _rollout_fn(env, steps, num_envs=N):
    """``run(key) -> {name: [T, N]}``, traceable (so it can be vmapped over members)."""
    wrapped = EpisodeStatistics(env)

    def run(key):
        obs, state = jax.vmap(wrapped.reset)(jax.random.split(key, num_envs))

        def body(carry, k):
            _, state = carry
            action = jax.random.randint(k, (num_envs,), 0, env.num_actions)
            nxt, state, reward, term, trunc, info = jax.vmap(wrapped.step)(
                jax.random.split(k, num_envs), state, action)
            frame = lambda x: x[..., -1].reshape(num_envs, -1).sum(-1)  # newest frame's mass
            out = dict(reward=reward, term=term, trunc=trunc, true_reward=info["true_reward"],
                       game_over=info["game_over"], life_lost=info["life_lost"],
                       lives=state.env_state.lives, obs_mass=frame(nxt),
                       final_mass=frame(info["final_observation"]),
                       older_mass=nxt[..., 0].reshape(num_envs, -1).sum(-1),
                       filled=(nxt.reshape(num_envs, -1, nxt.shape[-1]).sum(1) > 0).sum(-1),
                       episode_return=info["episode_return"], episode_done=info["episode_done"])
            return (nxt, state), out

        return jax.lax.scan(body, (obs, state), jax.random.split(key, steps))[1]

    return run


def test_ppo_trains_two_seeds_on_breakout():
    """A tiny PPO run on Breakout: two vmapped seeds over one pool, on one device (sharding the
    members would make each device step the same emulators), evaluated on another pool."""
    from jaxrl import train

    result = train("ppo", "atari:Breakout", seeds=2, total_steps=2 * 2 * 16 * 4, store=False,
                   progress=False, num_envs=2, num_steps=16, hidden=(8,), torso="mlp",
                   update_epochs=1, num_minibatches=1, eval_episodes=2,
                   env_kwargs={"max_frames": 400})
    assert result.devices == "1 x cpu"
    m = result.metrics
    assert sorted(m.seed.unique()) == [0, 1] and np.isfinite(m.value_loss).all()
    assert m.episode_count.sum() > 0 and np.isfinite(m.episode_return_mean).any()
    assert jnp.all(jnp.isfinite(jax.tree.leaves(result.state.params)[0]))
    # evaluation plays whole games (here cut at 100 steps) on a pool of its own, in game score
    assert np.isfinite(result.final_eval_return).all()
    assert (result.final_eval_return == np.round(result.final_eval_return)).all()


def test_atari_presets_follow_reading_002():
    """PPO, A2C and DQN default to reading 002's Atari settings on the atari family. DQN's
    250k replay fits with frames kept once as uint8; of float stacks it does not, and the memory
    plan says so before anything compiles."""
    from jaxrl import algos
    from jaxrl.algos import a2c, dqn, ppo
    from jaxrl.parts import memory

    p = ppo.default_config("atari:Pong")
    assert (p.num_envs, p.num_steps, p.update_epochs, p.num_minibatches) == (8, 128, 4, 4)
    assert (p.clip_eps, p.learning_rate, p.ent_coef, p.torso) == (0.1, 2.5e-4, 0.01, "nature_cnn")
    assert p.shared_network and not p.normalize_obs and p.anneal_clip and p.anneal_lr
    a = a2c.default_config("atari:Breakout")
    assert (a.num_envs, a.num_steps, a.optimizer, a.rmsprop_style) == (16, 5, "rmsprop", "pytorch")
    assert (a.learning_rate, a.rmsprop_eps, a.torso) == (7e-4, 1e-3, "nature_cnn")
    assert (a.vf_coef, a.anneal_lr) == (0.5, False)  # vel's: 0.5 x 0.5 MSE, a constant LR
    from jaxrl import train
    from jaxrl.parts.memory import MemoryPlanError

    d = dqn.default_config("atari:Pong")
    assert (d.buffer_size, d.learning_starts, d.batch_size, d.target_update_period) == (
        250_000, 30_000, 32, 10_000)
    assert d.frame_replay and d.double_q and d.num_envs // d.gradient_steps == 4
    env, params = envs.make("atari:Pong")
    replay = memory.estimate(algos.get("dqn"), d, env, params, members=1).replay_bytes
    assert 3.3e9 < replay < 3.8e9  # two uint8 frames per item (one in the ring): 3.5 GB per seed
    with pytest.raises(MemoryPlanError, match="replay buffer"):
        train("dqn", "atari:Pong", seeds=4, total_steps=10_000, store=False, progress=False,
              frame_replay=False)


def test_dqn_frame_replay_learns_exactly_what_float_replay_learns():
    """Frames kept once as uint8 rebuild every sampled stack exactly: a DQN run on Pong with
    frame replay ends with the same parameters, bit for bit, as the same run storing whole
    float stacks, and the frame store reports no stack it could not rebuild."""
    from jaxrl import train

    kw = dict(seeds=1, total_steps=2 * 8 * 6, store=False, progress=False, num_envs=2,
              log_interval=8, buffer_size=40, batch_size=8, learning_starts=16, hidden=(8,),
              torso="mlp", n_step=3, eval_episodes=0, target_update_period=2,
              env_kwargs={"max_frames": 100})  # games cut at 25 steps: resets inside n-step
    # windows, and the ring (20 + 3 + 4 rounds) wraps within the 48 rounds
    frames = train("dqn", "atari:Pong", frame_replay=True, **kw)
    floats = train("dqn", "atari:Pong", frame_replay=False, **kw)
    assert (frames.metrics.frame_mismatches == 0).all()
    assert frames.metrics.gradient_updates.iloc[-1] > 0 and frames.metrics.episode_count.sum() > 0
    for a, b in zip(jax.tree.leaves(frames.state.params), jax.tree.leaves(floats.state.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_acer_preset_keeps_vels_replay_in_frames_kept_once_per_segment():
    """ACER's Atari replay is vel's and baselines': 50k steps per env (30k segments of 12 x 20
    steps), replayed from 10k per env. With each segment's frames kept once (28 uint8 frames per
    20 steps) that is 5.9 GB per seed; whole uint8 stacks for obs and next obs would be 34 GB."""
    from jaxrl import algos
    from jaxrl.algos import acer
    from jaxrl.parts import memory

    c = acer.default_config("atari:Breakout")
    assert (c.num_envs, c.num_steps, c.buffer_segments, c.replay_start) == (12, 20, 30_000, 6_000)
    assert c.frame_replay and not c.uint8_replay and c.segment_restarts == 1
    env, params = envs.make("atari:Breakout")
    replay = memory.estimate(algos.get("acer"), c, env, params, members=1).replay_bytes
    assert 5.9e9 < replay < 6.0e9
    whole = memory.estimate(algos.get("acer"), c.replace(frame_replay=False, uint8_replay=True),
                            env, params, members=1).replay_bytes
    assert 33e9 < whole < 35e9


def test_acer_frame_replay_learns_exactly_what_whole_stacks_learn():
    """Segments keeping their frames once rebuild every replayed observation exactly: an ACER
    run on Pong with frame replay ends with the same parameters, bit for bit, as the same run
    storing whole uint8 stacks. Games are cut at 25 steps, so segments of 8 steps hold resets;
    with no room for one, the segments that hold one are counted."""
    from jaxrl import train

    kw = dict(seeds=1, total_steps=2 * 8 * 8, store=False, progress=False, num_envs=2,
              num_steps=8, buffer_segments=6, replay_start=2, replay_batch=2, replay_ratio=2,
              hidden=(8,), torso="mlp", eval_episodes=0, env_kwargs={"max_frames": 100})
    kept_once = train("acer", "atari:Pong", frame_replay=True, **kw)
    whole = train("acer", "atari:Pong", frame_replay=False, uint8_replay=True, **kw)
    m = kept_once.metrics
    assert (m.frame_mismatches == 0).all() and m.episode_count.sum() > 0
    assert m.replay_fraction.iloc[-1] == 1.0
    for a, b in zip(jax.tree.leaves(kept_once.state.params), jax.tree.leaves(whole.state.params)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    no_room = train("acer", "atari:Pong", frame_replay=True, segment_restarts=0, **kw)
    assert no_room.metrics.frame_mismatches.sum() > 0


def test_a_killed_atari_run_resumes_in_a_new_process(tmp_path):
    """The emulators' handles in a checkpoint point into the process that wrote it: a resumed
    Atari run keeps its learner from the checkpoint and starts fresh emulators (reading the old
    handles segfaulted)."""
    import subprocess
    import sys

    from jaxrl.runs.store import RunStore

    base = [sys.executable, "-m", "jaxrl.cli"]
    sets = ["num_envs=2", "num_steps=8", "hidden=8", "torso=mlp", "update_epochs=1",
            "num_minibatches=1"]
    train = [*base, "train", "ppo", "--env", "atari:Pong", "--seeds", "2", "--total-steps",
             str(3 * 16), "--max-chunk-updates", "1", "--checkpoint-every", "1",
             "--eval-episodes", "0", "--runs-dir", str(tmp_path), "--no-progress"]
    for s in sets:
        train += ["--set", s]
    killed = subprocess.run([sys.executable, "-m", "jaxrl.cli.faults", "1", *train[3:]],
                            capture_output=True, text=True, check=False, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    (run_id,) = [p.name for p in tmp_path.iterdir()]
    resumed = subprocess.run([*base, "resume", run_id, "--runs-dir", str(tmp_path),
                              "--no-progress"], capture_output=True, text=True, check=False,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    meta = RunStore(tmp_path).load(run_id)
    assert meta["status"] == "finished" and len(meta["resumed"]) == 1
    assert meta["frames_per_step"] == 4  # the frame skip, for reports in frames
