"""A trained policy serves fast and travels alone: `TrainResult.act` slices a seed's acting state
once (not at every call) and gives the action the sliced state gives; `export_policy` writes a
JAX program that a process without jaxrl checks and runs to the same actions, observation
normalization included."""

import subprocess
import sys
import time

import jax
import numpy as np
import pytest

import jaxrl
from jaxrl.algos import acting


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return jaxrl.train("ppo", "Pendulum-v1", seeds=2, total_steps=2048, progress=False,
                       runs_dir=str(tmp_path_factory.mktemp("runs")), num_envs=4, num_steps=64,
                       eval_episodes=1)


def test_act_gives_the_sliced_states_action_and_is_fast(result):
    assert result.config.normalize_obs  # the statistics are part of what is served
    obs = np.random.default_rng(0).normal(size=(7, 3)).astype(np.float32)
    for seed in (0, 1):
        state = jax.tree.map(lambda x: x[seed], result.state)  # the slice act took before
        want = result._act.step(state, (), obs, jax.random.key(seed), True)[1]
        np.testing.assert_array_equal(np.asarray(result.act(obs, seed=seed)), np.asarray(want))
    result.act(obs[0], seed=1)
    start = time.perf_counter()
    for _ in range(50):
        np.asarray(result.act(obs[0], seed=1))
    per_call = (time.perf_counter() - start) / 50
    assert per_call < 0.02, f"{per_call * 1e3:.1f} ms per call"  # was ~40-200 ms; ~0.4 ms here
    stochastic = result.act(obs, key=jax.random.key(3), seed=0, deterministic=False)
    assert np.asarray(stochastic).shape == (7, 1)


def test_the_exported_policy_runs_without_jaxrl(result, tmp_path):
    path = result.export_policy(tmp_path / "pendulum.jaxpolicy", seed=1)
    obs = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    want = np.asarray(result.act(obs, seed=1))
    code = (
        "import hashlib, sys, jax, numpy as np\n"  # the check the serving docstring shows
        f"header, payload = open({str(path)!r}, 'rb').read().split(b'\\n', 1)\n"
        "assert header == b'jaxrl-policy 1 sha256=' + "
        "hashlib.sha256(payload).hexdigest().encode()\n"
        "serve = jax.export.deserialize(payload)\n"
        "obs = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)\n"
        "np.save(sys.stdout.buffer, np.asarray(serve.call(obs)))\n"
        "np.save(sys.stdout.buffer, np.asarray(serve.call(obs[:1])))\n"
        "assert 'jaxrl' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    import io
    out = io.BytesIO(done.stdout)
    np.testing.assert_allclose(np.load(out), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.load(out), want[:1], rtol=1e-5, atol=1e-6)


def test_the_checked_loader_serves_the_seeds_actions_on_one_platform(result, tmp_path):
    from jaxrl.trained.serving import load_exported

    path = result.export_policy(tmp_path / "pendulum.jaxpolicy", seed=0, platforms="cpu")
    serve = load_exported(path)
    assert serve.platforms == ("cpu",)
    obs = np.random.default_rng(2).normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(serve.call(obs)), np.asarray(result.act(obs, seed=0)),
                               rtol=1e-5, atol=1e-6)


def test_a_recurrent_policy_is_not_exported(result, tmp_path):
    from jaxrl.trained import serving

    recurrent = acting.Policy(lambda n: (), None, None, None, recurrent=True)
    with pytest.raises(ValueError, match="recurrent policy"):
        serving.export_policy(recurrent, None, (3,), np.float32, tmp_path / "x")
