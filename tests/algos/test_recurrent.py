"""Recurrent policies (PPO and A2C, ``rnn="gru" | "lstm"``): the training-time unroll replays
the rollout exactly, memory is zero at every episode start, minibatches hold whole env
sequences, evaluation carries the memory, and the memory probe is passed by recurrent policies
and failed by feed-forward ones."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
from envs.probes import MemoryProbe
from envs.wrappers import EpisodeStatistics
from jaxrl import algos
from jaxrl.algos import onpolicy, ppo
from jaxrl.api import train
from jaxrl.config import ConfigError


@pytest.mark.parametrize("rnn,shared,heads", [("gru", False, ()), ("lstm", False, ()),
                                               ("gru", True, (8, 8))])
def test_the_unroll_replays_the_rollout_and_starts_episodes_from_zero_memory(rnn, shared,
                                                                              heads):
    env, params = envs.make("CartPole-v1")
    env = EpisodeStatistics(env)
    config = ppo.PPOConfig(rnn=rnn, rnn_size=16, hidden=(16,), num_envs=4, num_steps=64,
                           normalize_obs=False, shared_network=shared, head_hidden=heads)
    static = config.static()
    state = ppo.ALGORITHM.init(jax.random.PRNGKey(0), env, params, config)
    network = onpolicy.make_network(static, env, params)

    @jax.jit
    def replay(state):
        _, memory, traj = onpolicy.rollout(state, jax.random.PRNGKey(1), static, env, params,
                                           network)
        batch = onpolicy.make_batch(state, traj, traj.reward, static, network)
        dist, value = onpolicy.forward(network, state.params, batch)
        fresh = network.apply(state.params, batch.obs, method=network.dist)  # zero memory
        return batch, dist.log_prob(batch.action), value, fresh.log_prob(batch.action), memory

    batch, log_prob, value, fresh, memory = replay(state)
    first = np.asarray(batch.first)
    assert first.sum() >= 4 and not first[0].any()  # episodes ended inside the rollout
    np.testing.assert_allclose(log_prob, batch.log_prob, atol=1e-5)  # ratio 1 before a step
    np.testing.assert_allclose(value, batch.value, atol=1e-5)
    np.testing.assert_allclose(np.asarray(fresh)[first], np.asarray(batch.log_prob)[first],
                               atol=1e-5)
    later = ~first
    later[0] = False  # the rollout's first step continues from the initial (zero) memory
    assert np.abs(np.asarray(fresh)[later] - np.asarray(batch.log_prob)[later]).max() > 1e-4
    assert jax.tree.structure(memory) == jax.tree.structure(state.memory)


def test_minibatches_hold_whole_env_sequences():
    t, n, m = 5, 8, 4
    obs = (100.0 * jnp.arange(n)[None, :] + jnp.arange(t)[:, None])[..., None]  # [T, N, 1]
    per_step = 100.0 * jnp.arange(n)[None, :] + jnp.arange(t)[:, None]
    batch = onpolicy.Batch(obs, per_step, per_step, per_step, per_step, per_step,
                           jnp.zeros((t, n), bool), (100.0 * jnp.arange(n)[:, None],))
    split = onpolicy.shuffle_into_minibatches(jax.random.PRNGKey(0), batch, m)
    assert split.obs.shape == (m, t, n // m, 1) and split.memory[0].shape == (m, n // m, 1)
    envs_seen = []
    for i in range(m):
        env_ids = np.asarray(split.obs[i, 0, :, 0]) // 100
        envs_seen += env_ids.tolist()
        np.testing.assert_array_equal(  # each column is one env's whole sequence, in order
            np.asarray(split.obs[i, :, :, 0]), 100 * env_ids[None] + np.arange(t)[:, None])
        np.testing.assert_array_equal(np.asarray(split.memory[0][i, :, 0]) // 100, env_ids)
        np.testing.assert_array_equal(np.asarray(split.log_prob[i]), split.obs[i, :, :, 0])
    assert sorted(envs_seen) == list(range(n))


def test_head_layers_sit_after_the_shared_core():
    """Craftax_Baselines' PPO-RNN shape: one torso layer, one core, then each head its own MLP
    (``head_hidden``); the feed-forward shared torso takes the same heads. A head without a
    shared torso or a core to sit on is refused."""
    env, params = envs.make("CartPole-v1")
    for rnn, width in (("gru", 16), ("none", 12)):
        config = ppo.PPOConfig(rnn=rnn, rnn_size=16, hidden=(12,), shared_network=True,
                               head_hidden=(8, 6), activation="relu")
        tree = ppo.ALGORITHM.init(jax.random.PRNGKey(0), env, params, config).params["params"]
        for head, out in (("policy", 2), ("value_net", 1)):
            assert _kernel_shapes(tree[head]) == [(width, 8), (8, 6), (6, out)], (rnn, head)
    with pytest.raises(ConfigError, match="head_hidden"):
        ppo.PPOConfig(head_hidden=(8,))


def _kernel_shapes(tree) -> list[tuple[int, ...]]:
    """The kernels' shapes of a head's dense layers, in their order (``Dense_<i>``)."""
    found = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        names = [str(getattr(k, "key", k)) for k in path]
        if names[-1] == "kernel":
            found[int(names[-2].removeprefix("Dense_"))] = tuple(leaf.shape)
    return [found[i] for i in sorted(found)]


def test_recurrent_configs_are_checked():
    with pytest.raises(ConfigError, match="rnn must be one of"):
        ppo.PPOConfig(rnn="transformer")
    with pytest.raises(ConfigError, match="whole envs"):
        ppo.PPOConfig(rnn="gru", num_envs=6, num_minibatches=4)
    for algo in ("vpg", "trpo"):
        with pytest.raises(ConfigError, match="PPO and A2C"):
            algos.get(algo).config_cls(rnn="gru")


def _memory_run(algo: str, **overrides):
    """The memory rung's run, with evaluation: ``(values at the first obs [seeds, 2], mean
    eval return per seed)``. An entropy bonus of 0.01 keeps the policy from settling on the
    wrong answer for one sign before its memory can tell the signs apart (without it one PPO
    GRU seed of two did, at 40k and at 80k steps)."""
    result = train(algo, store=False, env=MemoryProbe.name, seeds=2, total_steps=40_960,
                   progress=False, eval_episodes=16, ent_coef=0.01, **overrides)
    env, params = envs.make(MemoryProbe.name)
    answer = env.answer(float(result.config.gamma), params)
    value = jax.vmap(algos.get(algo).policy(result.config.static(), env, params).value, (0, None))
    values = np.asarray(value(result.state, np.asarray(answer.observations)))
    return values, answer, result


@pytest.mark.parametrize("algo,rnn", [("ppo", "gru"), ("a2c", "lstm")])
def test_the_memory_rung_needs_memory(algo, rnn):
    """Recurrent: V(first obs) = gamma^3 at both signs, and evaluation (memory carried from
    step to step) always names the first obs on the last step: return 1. Feed-forward: the
    values at the two signs cancel and evaluation scores 0 on average."""
    values, answer, result = _memory_run(algo, rnn=rnn, rnn_size=32)
    np.testing.assert_allclose(values, np.broadcast_to(answer.values, values.shape),
                               atol=answer.value_tolerance)
    np.testing.assert_array_equal(result.final_eval_return, 1.0)
    # result.act carries the memory: after +-1 and three zeros it names the first sign.
    obs, memory = np.array([[-1.0], [1.0]], np.float32), None
    for _ in range(MemoryProbe.length):
        action, memory = result.act(obs, seed=1, memory=memory)
        obs = np.zeros_like(obs)
    np.testing.assert_array_equal(action, [0, 1])
    values, answer, result = _memory_run(algo)
    assert np.all(np.abs(values - answer.values).max(axis=1) > 3 * answer.value_tolerance)
    assert abs(float(np.mean(result.final_eval_return))) < 0.5
    assert np.asarray(result.act(np.zeros((2, 1), np.float32))).shape == (2,)


def test_several_recurrent_seeds_run_sharded():
    """Four LSTM seeds split over the host devices, two per device: this hung while the cores'
    recurrent kernels were initialized by LAPACK's QR (batched over seeds, it deadlocked XLA:CPU's
    thread pool; `jaxrl.ops.init`)."""
    result = train("ppo", store=False, env="CartPole-v1", seeds=4, total_steps=4 * 32 * 4,
                   num_steps=32, rnn="lstm", rnn_size=16, max_chunk_updates=2, progress=False,
                   eval_episodes=2)
    assert result.devices == f"{min(2, len(jax.devices()))} x cpu"
    assert np.isfinite(result.final_eval_return).all()


def test_the_gru_is_flax_gru_cell_with_its_inputs_projected_apart():
    """`jaxrl.parts.recurrent.GRU` keeps `GRUCell`'s parameters (names, shapes, initial values: a
    stored run's policy loads) and computes the same step, and its two parts make that step."""
    import flax.linen as nn

    from jaxrl.ops.init import orthogonal
    from jaxrl.parts.recurrent import GRU

    x = jax.random.normal(jax.random.key(1), (5, 7))
    h = jax.random.normal(jax.random.key(2), (5, 16))
    ref, new = (cell(16, recurrent_kernel_init=orthogonal()) for cell in (nn.GRUCell, GRU))
    params = new.init(jax.random.key(0), h, x)
    assert jax.tree.all(jax.tree.map(lambda a, b: bool((a == b).all()),
                                     ref.init(jax.random.key(0), h, x), params))
    want = ref.apply(params, h, x)[0]
    np.testing.assert_allclose(new.apply(params, h, x)[0], want, rtol=0, atol=1e-6)
    projected = new.apply(params, x, method=new.project)
    np.testing.assert_allclose(new.apply(params, h, projected, method=new.recur)[0], want,
                               rtol=0, atol=1e-6)
