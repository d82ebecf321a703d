"""The memory plan: exact state sizes from abstract evaluation, refusals before any compile."""

import re
import resource
import time

import jax
import pytest

from jaxrl import algos, api
from jaxrl.algos import acer, bc, iqn, offpolicy, onpolicy, pqn, q_learner
from jaxrl.config import ConfigError
from jaxrl.engine import programs
from jaxrl.engine.spec import resolve
from jaxrl.parts import memory

GiB = 1 << 30


def build(algo, env, seeds=1, **overrides):
    algorithm, wrapped, env_params, config, _ = resolve(algo, env, 100_000, seeds,
                                                               **overrides)
    return algorithm, config, wrapped, env_params


def initialized(algorithm, config, env, env_params):
    """A real train state (one jitted init: quicker than dispatching its ops one by one)."""
    return jax.jit(lambda k: algorithm.init(k, env, env_params, config))(jax.random.key(0))


def concrete_bytes(tree):
    return sum(leaf.nbytes for leaf in jax.tree.leaves(tree))


@pytest.fixture
def no_override(monkeypatch):
    monkeypatch.delenv(memory.MEMORY_ENV_VAR, raising=False)


def test_each_family_states_its_memory_model():
    """The plan asks the algorithm's family for its model; it never guesses from the config."""
    for name, algorithm in algos.ALGORITHMS.items():
        family = offpolicy if name in ("dqn", "ddpg", "td3", "sac") else onpolicy
        family = acer if name == "acer" else family  # on-policy rollouts plus a segment replay
        family = bc if name == "bc" else family  # no env steps: a batch of expert steps
        model = family.memory_model
        if name in ("c51", "qrdqn"):  # off-policy, plus the [B, K, K] pairwise arrays
            model = q_learner.distributional_memory_model
        if name == "pqn":  # its kept rollouts, plus the on-policy working set per rollout
            model = pqn.memory_model
        if name == "iqn":  # off-policy, plus the [B, N, N'] pairs and the per-fraction layers
            model = iqn.memory_model
        assert algorithm.memory_model is model, name


def test_acer_replay_bytes_are_its_segment_buffer():
    algorithm, config, env, env_params = build("acer", "CartPole-v1", buffer_segments=300)
    est = memory.estimate(algorithm, config, env, env_params, members=1)
    state = initialized(algorithm, config, env, env_params)
    assert est.replay_bytes == concrete_bytes(state.buffer)
    assert est.state_bytes == concrete_bytes(state)


def test_ppo_state_bytes_are_exact():
    algorithm, config, env, env_params = build("ppo", "CartPole-v1")
    est = memory.estimate(algorithm, config, env, env_params, members=1)
    state = initialized(algorithm, config, env, env_params)
    assert est.state_bytes == concrete_bytes(state)
    assert est.replay_bytes == 0
    assert est.transient_bytes > 0


def test_off_policy_replay_bytes_are_exact():
    algorithm, config, env, env_params = build("dqn", "CartPole-v1", buffer_size=1000)
    est = memory.estimate(algorithm, config, env, env_params, members=1)
    state = initialized(algorithm, config, env, env_params)
    assert est.state_bytes == concrete_bytes(state)
    assert est.replay_bytes == concrete_bytes(state.buffer) > 0


def test_distributional_learners_add_their_pairwise_arrays_and_pqn_has_no_replay():
    """C51 and QR-DQN: the off-policy model plus 3 x [batch, K, K] float32 (C51's projection
    weights, QR-DQN's pairwise differences); PQN: exact state bytes, no replay."""
    for algo, k in (("c51", 51), ("qrdqn", 32)):
        size = {"num_atoms": k} if algo == "c51" else {"num_quantiles": k}
        algorithm, config, env, env_params = build(algo, "CartPole-v1", buffer_size=1000,
                                                   batch_size=64, **size)
        state = jax.eval_shape(lambda key: algorithm.init(key, env, env_params, config),
                               jax.random.key(0))
        plain = offpolicy.memory_model(config, state, 16, 4)
        extra = algorithm.memory_model(config, state, 16, 4)
        assert extra.replay_bytes == plain.replay_bytes == memory.tree_bytes(state.buffer) > 0
        assert extra.working_bytes - plain.working_bytes == 3 * 64 * k * k * 4, algo
    algorithm, config, env, env_params = build("pqn", "CartPole-v1")
    est = memory.estimate(algorithm, config, env, env_params, members=1)
    assert est.state_bytes == concrete_bytes(initialized(algorithm, config, env, env_params))
    assert est.replay_bytes == 0 and est.transient_bytes > 0


def test_huge_replay_request_is_refused_fast_without_allocating(no_override):
    start = time.perf_counter()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    algorithm, config, env, env_params = build("sac", "Pendulum-v1", seeds=10_000,
                                               buffer_size=10_000_000)
    with pytest.raises(memory.MemoryPlanError) as info:
        memory.check(algorithm, config, env, env_params, members=10_000)
    elapsed = time.perf_counter() - start
    rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) * 1024
    assert elapsed < 5.0, elapsed
    # One member's buffer alone would be ~390 MiB if it were ever materialized.
    assert rss_growth < 256 << 20, rss_growth

    message = str(info.value)
    assert isinstance(info.value, ConfigError) and "\n" not in message
    est = memory.estimate(algorithm, config, env, env_params, members=10_000)
    # 10M transitions of (obs 3 + action 1 + reward + discount + next obs 3) float32, two
    # bools (terminated, ended), the int32 n-step length and an int32 write step; then the
    # int32 position and size
    assert est.replay_bytes == 10_000_000 * (4 * (3 + 1 + 1 + 1 + 3) + 2 + 4 + 4) + 8
    assert message.startswith("memory plan: 10000 seeds of sac need ~")
    assert memory.format_bytes(est.per_device()) in message
    assert memory.format_bytes(est.per_member()) + " per seed" in message
    assert f"replay buffer {memory.format_bytes(est.replay_bytes)}" in message
    fit = int(re.search(r"at most (\d+) seeds fit", message).group(1))
    assert fit == est.max_members(memory.device_capacity_bytes(sharing=1)) < 10_000


def test_max_members_is_the_boundary():
    algorithm, config, env, env_params = build("sac", "Pendulum-v1", buffer_size=50_000)
    for devices in (1, 3):
        est = memory.estimate(algorithm, config, env, env_params, members=1, devices=devices)
        for capacity in (est.per_member() - 1, est.per_member(), 10 * GiB + 12345):
            fit = est.max_members(capacity)
            if fit:
                assert est.replace(members=fit).per_device() <= capacity
            assert est.replace(members=fit + 1).per_device() > capacity
            if fit:
                memory.check(algorithm, config, env, env_params, members=fit, devices=devices,
                             capacity_bytes=capacity)
            with pytest.raises(memory.MemoryPlanError, match=rf"at most {fit} seeds? fit"):
                memory.check(algorithm, config, env, env_params, members=fit + 1,
                             devices=devices, capacity_bytes=capacity)
        assert est.max_members(est.per_member() - 1) == 0
        assert est.max_members(est.per_member()) == devices


def test_seeds_per_config_message():
    algorithm, config, env, env_params = build("sac", "Pendulum-v1", buffer_size=50_000)
    est = memory.estimate(algorithm, config, env, env_params, members=1)
    capacity = 10 * est.per_member()  # 10 members fit: 2 seeds for each of 4 configs
    with pytest.raises(memory.MemoryPlanError) as info:
        memory.check(algorithm, config, env, env_params, members=4 * 8,
                     capacity_bytes=capacity, seeds_per_config=8)
    message = str(info.value)
    assert "4 configs x 8 seeds (32 members) of sac" in message
    assert "at most 10 members fit (2 seeds per config)" in message


def test_capacity_override(monkeypatch):
    monkeypatch.setenv(memory.MEMORY_ENV_VAR, "123456789")
    assert memory.device_capacity_bytes() == 123456789
    monkeypatch.setenv(memory.MEMORY_ENV_VAR, "2e9")
    assert memory.device_capacity_bytes() == 2_000_000_000

    algorithm, config, env, env_params = build("ppo", "CartPole-v1")
    est = memory.estimate(algorithm, config, env, env_params, members=1)
    monkeypatch.setenv(memory.MEMORY_ENV_VAR, str(4 * est.per_member()))
    memory.check(algorithm, config, env, env_params, members=4)
    with pytest.raises(memory.MemoryPlanError, match=r"\$JAXRL_DEVICE_MEMORY_BYTES.*at most 4 "):
        memory.check(algorithm, config, env, env_params, members=5)

    monkeypatch.setenv(memory.MEMORY_ENV_VAR, "lots")
    with pytest.raises(memory.MemoryPlanError, match="JAXRL_DEVICE_MEMORY_BYTES"):
        memory.device_capacity_bytes()


def test_cpu_capacity_is_physical_ram(no_override):
    device = jax.devices("cpu")[0]
    ram = memory._physical_ram()
    cpus = len([d for d in jax.local_devices() if d.platform == "cpu"]) or 1
    assert memory.device_capacity_bytes(device) == ram // cpus > 0
    # a program on one CPU device has the whole RAM; on two, half each
    assert memory.device_capacity_bytes(device, sharing=1) == ram
    assert memory.device_capacity_bytes(device, sharing=2) == ram // 2


def test_a_program_on_one_cpu_device_may_use_all_the_ram(no_override, monkeypatch):
    """An Atari run keeps its seeds on one device (one emulator pool): its plan counts the
    whole RAM, not the share of one device among the idle others."""
    algorithm, config, env, env_params = build("dqn", "CartPole-v1", buffer_size=1_000_000)
    per_member = memory.estimate(algorithm, config, env, env_params, members=1).per_member()
    monkeypatch.setattr(memory, "_physical_ram", lambda: 3 * per_member)
    memory.check(algorithm, config, env, env_params, members=3, devices=1)
    with pytest.raises(memory.MemoryPlanError, match="at most 2 seeds fit"):
        memory.check(algorithm, config, env, env_params, members=6, devices=2)


def test_small_run_fits_and_bounds_the_compiled_program(no_override):
    algorithm, config, env, env_params = build("ppo", "CartPole-v1", seeds=8)
    est = memory.check(algorithm, config, env, env_params, members=8)
    assert est.members == 8 and est.per_device() == 8 * est.per_member()
    assert "8 members on 1 device" in est.describe() and "MiB" in est.describe()
    # Two devices: the busiest holds ceil(9 / 2) = 5 members.
    assert est.replace(members=9, devices=2).per_device() == 5 * est.per_member()

    # The estimate bounds what XLA actually assigns for the engine's chunk program.
    analysis = chunk_memory(algorithm, config, env, env_params, members=8)
    xla = (analysis.argument_size_in_bytes + analysis.output_size_in_bytes
           + analysis.temp_size_in_bytes - analysis.alias_size_in_bytes)
    assert analysis.argument_size_in_bytes == 8 * est.state_bytes
    assert xla <= est.per_device(), (xla, est.describe())


def chunk_memory(algorithm, config, env, env_params, members: int):
    """XLA's memory analysis of the engine's chunk program (2 train steps) for ``members``."""
    from jaxrl.engine import programs

    keys = jax.random.split(jax.random.key(0), members)
    states = jax.eval_shape(jax.vmap(lambda k: algorithm.init(k, env, env_params, config)),
                            keys)
    program = programs.compiled(
        ("chunk", 2), algorithm, config, env, env_params,
        programs.chunk_program(algorithm, config, env, env_params, 2, members), states,
        donate_first=True).program
    analysis = program.memory_analysis()
    if analysis is None:
        pytest.skip("this backend reports no memory analysis")
    return analysis


def test_a_chunk_updates_the_train_state_in_place(no_override):
    """The driver donates the state to the chunk program: the output state takes over the
    input's buffers (the replay buffer above all), so a member's state lives once in memory."""
    algorithm, config, env, env_params = build("dqn", "CartPole-v1", buffer_size=200_000,
                                               learning_starts=0)
    est = memory.estimate(algorithm, config, env, env_params, members=2)
    assert memory.STATE_COPIES == 1 and est.replay_bytes > 1e7  # per member
    analysis = chunk_memory(algorithm, config, env, env_params, members=2)
    assert analysis.alias_size_in_bytes >= 2 * est.state_bytes * 0.99
    xla = (analysis.argument_size_in_bytes + analysis.output_size_in_bytes
           + analysis.temp_size_in_bytes - analysis.alias_size_in_bytes)
    assert xla <= est.per_device(), (xla, est.describe())
    assert xla < 1.5 * 2 * est.replay_bytes  # the two members' buffers once, not twice
    # and the driver's chunk program is the donating one
    from jaxrl import train
    from jaxrl.engine import programs

    train("dqn", "CartPole-v1", seeds=1, total_steps=1000, store=False, progress=False,
          eval_episodes=0, buffer_size=1000, learning_starts=64)
    chunks = [key for key in programs.PROGRAMS if key[0][0] == "chunk"]
    assert chunks and all(key[-1] is True for key in chunks)


def test_format_bytes():
    assert memory.format_bytes(512) == "512 B"
    assert memory.format_bytes(364 << 20) == "364 MiB"
    assert memory.format_bytes(int(3.6 * (1 << 40))) == "3.6 TiB"
    assert memory.format_bytes(int(23.4 * GiB)) == "23.4 GiB"


def test_bad_member_count():
    algorithm, config, env, env_params = build("ppo", "CartPole-v1")
    with pytest.raises(memory.MemoryPlanError):
        memory.estimate(algorithm, config, env, env_params, members=0)


def test_train_and_cli_refuse_an_impossible_run_before_compiling_or_recording(tmp_path):
    """The engine runs the memory plan before anything compiles or is recorded."""
    import subprocess
    import sys
    import time

    compiled = len(programs.PROGRAMS)
    start = time.perf_counter()
    with pytest.raises(memory.MemoryPlanError, match="at most"):
        api.train("sac", env="Pendulum-v1", seeds=10_000, total_steps=100_000,
                  runs_dir=str(tmp_path), progress=False, buffer_size=10_000_000)
    assert time.perf_counter() - start < 10
    assert len(programs.PROGRAMS) == compiled and not list(tmp_path.iterdir())
    proc = subprocess.run(
        [sys.executable, "-m", "jaxrl.cli", "train", "sac", "--env", "Pendulum-v1", "--seeds",
         "10000", "--set", "buffer_size=10000000", "--runs-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "memory plan" in lines[0] and "seeds fit" in lines[0], lines
    assert not list(tmp_path.iterdir())
