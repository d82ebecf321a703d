"""ACER's own pieces: segments keep every step aligned (obs, action, reward, flags, behaviour
probabilities: reading 002's ACER bug was states shifted by one against actions and rewards),
through the replay too; the bias correction and the importance-weight truncation switch on
exactly off-policy; the trust region binds when the step would leave the average policy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
from jaxrl.algos import acer
from jaxrl.algos.acer import segments as acer_segments
from jaxrl.parts.buffers import uniform


def _setup(env_name, **overrides):
    env, params = envs.make(env_name)
    env = envs.EpisodeStatistics(env)
    config = acer.default_config(env_name).replace(**overrides)
    state = jax.jit(lambda k: acer.init(k, env, params, config))(jax.random.key(0))
    return env, params, config, state, acer.make_network(config, env, params)


@pytest.fixture(scope="module")
def cartpole_segments():
    """Three rollouts of 4 CartPole envs x 25 steps through the replay (capacity 8 segments,
    so the first rollout's are overwritten), and what the last rollout collected."""
    env, params, config, state, network = _setup(
        "CartPole-v1", num_envs=4, num_steps=25, buffer_segments=8, replay_start=1)

    @jax.jit
    def run(state):
        buffer, collected = state.buffer, []
        for i in range(3):
            key = jax.random.fold_in(jax.random.key(1), i)
            carry, seg, _ = acer.collect_segments(state, key, config, env, params, network)
            buffer = uniform.add(buffer, acer_segments.transpose(seg), i)
            state = state.replace(carry=carry)
            collected.append(seg)
        logits, _ = network.apply(state.params, collected[-1].obs)
        return buffer, collected[-1], jax.nn.softmax(logits)

    buffer, last, probs = run(state)
    return buffer, last, probs


def _aligned(seg, probs=None):
    """Within each env's steps: the next step starts where this one ended unless it ended the
    episode, and CartPole's reward is 1 on every step."""
    obs, next_obs = np.asarray(seg.obs), np.asarray(seg.next_obs)
    done = np.asarray(seg.terminated) | np.asarray(seg.truncated)
    assert done.any() and (~done).any()
    cont = ~done[:-1]
    np.testing.assert_array_equal(next_obs[:-1][cont], obs[1:][cont])
    assert not np.any(np.all(next_obs[:-1][done[:-1]] == obs[1:][done[:-1]], axis=-1))
    np.testing.assert_array_equal(np.asarray(seg.reward), 1.0)
    if probs is not None:
        np.testing.assert_allclose(np.asarray(seg.mu), np.asarray(probs), rtol=1e-6)


def test_collected_segments_are_aligned(cartpole_segments):
    _, last, probs = cartpole_segments
    assert last.obs.shape == (25, 4, 4) and last.mu.shape == (25, 4, 2)
    _aligned(last, probs)  # mu is the policy's own distribution at each step's obs


def test_replayed_segments_are_whole_and_aligned(cartpole_segments):
    buffer, last, _ = cartpole_segments
    assert int(buffer.size) == 8
    gathered = uniform.gather(buffer, jnp.arange(8))
    stored = acer_segments.transpose(jax.tree.map(np.asarray, gathered))
    _aligned(stored)  # [T, 8]: every stored segment keeps its steps in order
    # the newest four slots hold the last rollout's segments, env by env
    slots = (np.arange(4) + int(buffer.position) - 4) % 8
    for k in ("obs", "action", "reward", "terminated", "truncated", "next_obs", "mu"):
        np.testing.assert_array_equal(np.asarray(getattr(stored, k))[:, slots],
                                      np.asarray(getattr(last, k)), err_msg=k)


def _update(seg, config, state, network, **hp):
    learner = acer.Learner(state.params, state.avg_params, state.opt_state)
    hparams = state.hparams.replace(**{k: jnp.float32(v) for k, v in hp.items()})
    return jax.jit(lambda s: acer.update(learner, s, hparams, config, network))(seg)


def test_bias_correction_and_truncation_only_off_policy():
    env, params, config, state, network = _setup("probe:obs-action", num_envs=8, num_steps=4)
    _, seg, _ = jax.jit(lambda s: acer.collect_segments(s, jax.random.key(2), config, env,
                                                        params, network))(state)
    _, on = _update(seg, config, state, network, c_bar=2.0)
    assert float(on["rho_mean"]) == pytest.approx(1.0, abs=1e-5)  # mu is the current policy
    assert float(on["bias_correction_share"]) == 0.0 and float(on["rho_truncated_fraction"]) == 0
    # a behaviour policy that almost never took the actions taken: rho far above c_bar, so
    # the policy gradient is truncated and the bias correction carries the rest
    taken = jax.nn.one_hot(seg.action, 2)
    off = seg.replace(mu=0.999 * (1 - taken) + 0.001 * taken)
    _, m = _update(off, config, state, network, c_bar=2.0)
    assert float(m["rho_truncated_fraction"]) == 1.0
    assert 0.0 < float(m["bias_correction_share"]) < 1.0


def test_the_trust_region_binds_only_when_the_step_leaves_the_average():
    env, params, config, state, network = _setup("probe:obs-action", num_envs=8, num_steps=4)
    _, seg, _ = jax.jit(lambda s: acer.collect_segments(s, jax.random.key(3), config, env,
                                                        params, network))(state)
    # the average is the current policy: k = 0, nothing to project
    _, same = _update(seg, config, state, network, delta=1e-6)
    assert float(same["trust_region_active_fraction"]) == 0.0
    # an average policy elsewhere and a tiny radius: the constraint binds on the samples
    shifted = jax.tree.map(lambda x: x + 0.5, state.avg_params)
    _, far = _update(seg, config, state.replace(avg_params=shifted), network, delta=1e-6)
    assert float(far["trust_region_active_fraction"]) > 0.0
    assert float(far["kl_from_average"]) > 0.0


def test_uint8_replay_gives_back_atari_frames_exactly():
    """Frames k * STEP (as `envs.atari` makes them) stored as uint8 come back bit for bit."""
    from jaxrl.parts.buffers.frames import STEP

    config = acer.default_config("atari:Pong").replace(frame_replay=False, uint8_replay=True)
    k = np.random.default_rng(0).integers(0, 256, (5, 3, 12)).astype(np.float32)
    flags = jnp.zeros((5, 3), bool)
    seg = acer_segments.Segment(obs=jnp.asarray(k * STEP), action=jnp.zeros((5, 3), jnp.int32),
                                reward=jnp.zeros((5, 3)), terminated=flags, truncated=flags,
                                next_obs=jnp.asarray(k[::-1] * STEP), mu=jnp.full((5, 3, 2), 0.5))
    stored, mismatches = acer_segments.to_replay(seg, config, None)
    assert stored.obs.dtype == jnp.uint8 and stored.obs.shape == (3, 5, 12) and mismatches == 0
    back = acer_segments.from_replay(stored, config, None)
    for name in ("obs", "next_obs", "mu"):
        np.testing.assert_array_equal(np.asarray(getattr(back, name)),
                                      np.asarray(getattr(seg, name)), err_msg=name)


def test_the_atari_presets_rmsprop_climbs_the_truncation_rung():
    """The Atari preset trains with reading 002's ACER optimizer (torch's RMSprop, lr 7e-4,
    alpha 0.99, eps 1e-3, clipped at 10), which learns a truncated episode's value; the update
    applies an RMSProp state, not Adam's."""
    import optax

    from jaxrl.studies.probe import run_ladder

    a = acer.default_config("atari:Pong")
    assert (a.optimizer, a.rmsprop_style, a.learning_rate) == ("rmsprop", "pytorch", 7e-4)
    assert (a.rmsprop_decay, a.rmsprop_eps, a.max_grad_norm) == (0.99, 1e-3, 10.0)
    state = acer.optimizer(a.hparams(), a.static()).init({"w": jnp.zeros(2)})
    assert any(isinstance(s, optax.ScaleByRmsState) for s in state)
    (result,) = run_ladder("acer", seeds=4, rungs=["probe:truncation"], optimizer="rmsprop",
                           rmsprop_decay=a.rmsprop_decay, rmsprop_eps=a.rmsprop_eps)
    assert result.passed, (result.measured, result.expected)


def test_replay_counts_fixed_and_poisson():
    """vel and baselines draw the replayed updates per rollout from Poisson(replay_ratio);
    ``fixed`` takes exactly replay_ratio."""
    fixed = acer.default_config("CartPole-v1").replace(replay_ratio=3)
    assert int(acer.replay_count(jax.random.key(0), fixed)) == 3
    poisson = fixed.replace(replay_schedule="poisson")
    keys = jax.random.split(jax.random.key(1), 4000)
    counts = np.asarray(jax.vmap(lambda k: acer.replay_count(k, poisson))(keys))
    assert counts.dtype == np.int32 and counts.min() == 0 and len(np.unique(counts)) > 5
    assert abs(counts.mean() - 3) < 0.15 and abs(counts.var() - 3) < 0.4
    assert acer.default_config("atari:Pong").replay_schedule == "poisson"
    with pytest.raises(ValueError, match="replay_schedule"):
        fixed.replace(replay_schedule="often").static().validate()


def test_each_train_step_replays_its_drawn_count_once_replay_starts():
    """Before replay_start no replayed update runs (NaN replay metrics); after it, each step
    runs as many as it drew, seed by seed under vmap, and reports their mean."""
    env, params, config, _, _ = _setup("CartPole-v1", num_envs=2, num_steps=4,
                                       buffer_segments=16, replay_start=4, replay_batch=2,
                                       replay_ratio=2, replay_schedule="poisson",
                                       hidden=(8, 8))
    static = config.static()

    def run(key):
        state = acer.init(key, env, params, config)
        return jax.lax.scan(lambda s, _: acer.train_step(s, static, env, params), state,
                            None, length=12)[1]

    keys = jax.random.split(jax.random.key(3), 2)
    m = jax.jit(jax.vmap(run))(keys)
    updates, ready = np.asarray(m["replay_updates"]), np.asarray(m["replay_fraction"])
    np.testing.assert_array_equal(ready, np.tile(np.arange(12) >= 1, (2, 1)))  # 2 a step
    assert np.all(updates[:, 0] == 0) and updates[:, 1:].sum() > 0
    assert np.any(updates[0] != updates[1])  # each seed draws its own counts
    q = np.asarray(m["replay_q_loss"])
    np.testing.assert_array_equal(np.isnan(q), updates == 0)
    one = jax.jit(run)(keys[1])  # the second seed alone: the same draws
    np.testing.assert_array_equal(np.asarray(one["replay_updates"]), updates[1])
    np.testing.assert_allclose(np.asarray(one["replay_q_loss"]), q[1], rtol=1e-5)
