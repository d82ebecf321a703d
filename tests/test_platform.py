"""`import jaxrl` gives the CPU backend one device per core (so seeds run on every core), unless
the count was already chosen or JAX was already in use; and the driver shards a program over
``min(devices, members)`` devices."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PROBE = r"""
import json, os, sys, warnings
warnings.simplefilter("always")
if sys.argv[1] == "jax-first":
    import jax; jax.numpy.zeros(1)  # a backend exists before jaxrl is imported
import jaxrl, jax
from jaxrl.engine.members import member_sharding
from jaxrl.platform import cpu_cores
shards = {n: (None if s is None else len(s.device_set), p)
          for n in (1, 2, 3, 5) for s, p in [member_sharding(n, True)]}
print(json.dumps({"devices": jax.local_device_count(), "cores": cpu_cores(),
                  "shards": {str(k): v for k, v in shards.items()}}))
"""


def _probe(mode="plain", **env_vars) -> tuple[dict, str]:
    # a fresh shell: none of the device-count variables that this pytest process inherited or set
    fresh = ("XLA_FLAGS", "JAXRL_CPU_DEVICES", "JAX_NUM_CPU_DEVICES", "JAXRL_SET_JAX_NUM_CPU_DEVICES")
    env = {k: v for k, v in os.environ.items() if k not in fresh}
    env.update(env_vars)
    proc = subprocess.run([sys.executable, "-c", PROBE, mode], env=env, capture_output=True,
                          text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_one_cpu_device_per_core_by_default():
    out, _ = _probe()
    assert out["devices"] == out["cores"]


def test_env_var_and_xla_flags_choose_the_count():
    out, _ = _probe(JAXRL_CPU_DEVICES="3")
    assert out["devices"] == 3
    # members are split over min(devices, members) devices, padded to a multiple of that
    assert out["shards"] == {"1": [None, 1], "2": [2, 2], "3": [3, 3], "5": [3, 6]}
    out, _ = _probe(JAXRL_CPU_DEVICES="1")
    assert out["devices"] == 1 and out["shards"]["5"] == [None, 5]
    out, _ = _probe(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAXRL_CPU_DEVICES="2")
    assert out["devices"] == 4  # an explicit XLA flag wins
    inherited = {"JAX_NUM_CPU_DEVICES": "2", "JAXRL_SET_JAX_NUM_CPU_DEVICES": "2"}
    out, _ = _probe(XLA_FLAGS="--xla_force_host_platform_device_count=4", **inherited)
    assert out["devices"] == 4  # ... also over the count a parent jaxrl process exported
    out, _ = _probe(JAXRL_CPU_DEVICES="3", **inherited)
    assert out["devices"] == 3  # a child honours its own request over the inherited one
    out, _ = _probe(JAX_NUM_CPU_DEVICES="3")
    assert out["devices"] == 3  # the user's own JAX setting is left alone


def test_bad_env_var_warns_and_falls_back():
    out, err = _probe(JAXRL_CPU_DEVICES="lots")
    assert out["devices"] == out["cores"]
    assert "ignoring JAXRL_CPU_DEVICES='lots'" in err


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores to tell apart")
def test_jax_used_before_import_is_left_alone():
    out, _ = _probe("jax-first")
    assert out["devices"] == 1


ONE_MEMBER = r"""
import sys
import jaxrl.api  # as the CLI: jaxrl's modules (and JAX) imported, no backend yet
from jaxrl.platform import one_device_for_one_member
changed = one_device_for_one_member(int(sys.argv[1]))
import jax
print(changed, jax.local_device_count())
"""


def _one_member(members: int, **env_vars) -> str:
    fresh = ("XLA_FLAGS", "JAXRL_CPU_DEVICES", "JAX_NUM_CPU_DEVICES", "JAXRL_SET_JAX_NUM_CPU_DEVICES")
    env = {k: v for k, v in os.environ.items() if k not in fresh}
    env.update(env_vars)
    proc = subprocess.run([sys.executable, "-c", ONE_MEMBER, str(members)], env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores to tell apart")
def test_one_member_gets_one_device_unless_the_count_was_chosen():
    cores = len(os.sched_getaffinity(0))
    assert _one_member(1) == "True 1"
    assert _one_member(2) == f"False {cores}"  # many members keep a device per core
    assert _one_member(1, JAXRL_CPU_DEVICES="2") == "False 2"  # the user's choice stands
    assert _one_member(1, JAX_NUM_CPU_DEVICES="2") == "False 2"
    assert _one_member(1, XLA_FLAGS="--xla_force_host_platform_device_count=2") == "False 2"


def test_the_cli_train_asks_for_one_device_at_one_seed(monkeypatch):
    """The ``jaxrl`` command asks with its member count; ``main([...])`` called inside a
    process that goes on (a test, a notebook) leaves the process's devices alone."""
    from jaxrl import cli
    from jaxrl.cli import training

    asked = []
    monkeypatch.setattr(training.platform, "one_device_for_one_member", asked.append)
    monkeypatch.setattr(training, "train", lambda *a, **k: (_ for _ in ()).throw(SystemExit(7)))
    for seeds in ("1", "4"):
        argv = ["train", "ppo", "--env", "CartPole-v1", "--seeds", seeds]
        before = list(asked)
        with pytest.raises(SystemExit):
            cli.main(argv)
        assert asked == before  # called inside this process: not asked
        monkeypatch.setattr(sys, "argv", ["jaxrl", *argv])
        with pytest.raises(SystemExit):
            cli.main()
    assert asked == [1, 4]  # the function decides what a count means


# ------------------------------------------------------------------ CPU optimization level


def test_cpu_programs_compile_at_o2_unless_chosen(monkeypatch):
    from jaxrl.platform import FAST_COMPILE_XLA_FLAGS, compiler_options

    # no level in XLA_FLAGS; the suite's emitter flag stays, in case this test is the first to
    # start this process's backend (XLA reads its flags once, then)
    monkeypatch.setenv("XLA_FLAGS", FAST_COMPILE_XLA_FLAGS)
    monkeypatch.delenv("JAXRL_CPU_OPT_LEVEL", raising=False)
    assert compiler_options("cpu") == {"xla_backend_optimization_level": 2}
    assert compiler_options("gpu") == {}  # only the CPU's LLVM level is jaxrl's choice
    # a program that runs once (init) compiles at -O0, on the CPU only
    assert compiler_options("cpu", runs_once=True) == {"xla_backend_optimization_level": 0}
    assert compiler_options("gpu", runs_once=True) == {}
    # an env's preferred level (`cpu_opt_level`) replaces the default, not a chosen level
    assert compiler_options("cpu", preferred=3) == {"xla_backend_optimization_level": 3}
    assert compiler_options("cpu", True, preferred=3) == {"xla_backend_optimization_level": 0}
    assert compiler_options("gpu", preferred=3) == {}
    monkeypatch.setenv("JAXRL_CPU_OPT_LEVEL", "3")
    assert compiler_options("cpu") == {"xla_backend_optimization_level": 3}
    assert compiler_options("cpu", preferred=1) == {"xla_backend_optimization_level": 3}
    monkeypatch.setenv("JAXRL_CPU_OPT_LEVEL", "0")
    with pytest.warns(UserWarning, match="JAXRL_CPU_OPT_LEVEL=0 .* non-finite.* not seen again"):
        assert compiler_options("cpu") == {"xla_backend_optimization_level": 0}
    monkeypatch.setenv("JAXRL_CPU_OPT_LEVEL", "fast")
    with pytest.warns(UserWarning, match="JAXRL_CPU_OPT_LEVEL='fast'"):
        assert compiler_options("cpu") == {"xla_backend_optimization_level": 2}
    # a level in XLA_FLAGS is the user's: jaxrl adds no option that would override it
    # (but a run-once program is still compiled at -O0: its run time does not depend on it)
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=1")
    assert compiler_options("cpu") == {}
    assert compiler_options("cpu", preferred=3) == {}
    assert compiler_options("cpu", runs_once=True) == {"xla_backend_optimization_level": 0}


def _engine_compile_options(monkeypatch) -> list[dict]:
    """The compile options of the engine's programs (init, chunk; no eval) for a tiny PPO run,
    with no level in ``XLA_FLAGS`` or ``JAXRL_CPU_OPT_LEVEL``, compiled afresh. Other jits
    (the act function) pass no options and are left out."""
    import jax

    from jaxrl import platform, train
    from jaxrl.engine import programs

    seen = []
    real = jax.jit

    def spy(fun, **kw):
        seen.append(kw.get("compiler_options"))
        return real(fun, **kw)

    monkeypatch.setenv("XLA_FLAGS", platform.FAST_COMPILE_XLA_FLAGS)  # no level (see above)
    monkeypatch.setattr(programs.jax, "jit", spy)
    monkeypatch.delenv("JAXRL_CPU_OPT_LEVEL", raising=False)
    programs.forget()  # compiled afresh, not this process's copy of an earlier test's init
    train("ppo", "probe:obs-action", total_steps=64, num_envs=2, num_steps=8,
          eval_episodes=0, store=False, progress=False, hidden=(4,))
    return [opts for opts in seen if opts]


def test_engine_compiles_with_the_chosen_level(monkeypatch):
    """The engine's programs are jitted with the level's compile option, init at -O0."""
    from jaxrl import platform

    monkeypatch.setattr(platform, "DEFAULT_CPU_OPT_LEVEL", 1)
    assert _engine_compile_options(monkeypatch) == [{"xla_backend_optimization_level": 0},
                                                    {"xla_backend_optimization_level": 1}]


def test_an_env_chooses_its_programs_level(monkeypatch):
    """An env's ``cpu_opt_level`` is the level of the engine's programs on it (init stays at
    -O0); brax's own physics asks for -O3, MJX's brax envs and gymnax's for nothing."""
    import envs
    from envs.core import Environment, wrapped_attr

    monkeypatch.setattr(Environment, "cpu_opt_level", 3)
    assert _engine_compile_options(monkeypatch) == [{"xla_backend_optimization_level": 0},
                                                    {"xla_backend_optimization_level": 3}]
    monkeypatch.undo()
    assert wrapped_attr(envs.make("brax:hopper", backend="positional")[0], "cpu_opt_level",
                        None) == 3
    assert wrapped_attr(envs.make("brax:hopper", backend="mjx")[0], "cpu_opt_level", None) is None
    assert wrapped_attr(envs.make("CartPole-v1")[0], "cpu_opt_level", None) is None


def _train_both() -> dict:
    """PPO and DQN on CartPole, 2 seeds each: every parameter, flattened, by algorithm."""
    import jax

    import jaxrl

    out = {}
    for algo, steps in (("ppo", 8192), ("dqn", 3000)):
        r = jaxrl.train(algo, env="CartPole-v1", seeds=2, total_steps=steps, progress=False,
                        store=False, eval_episodes=0)
        out[algo] = np.concatenate([np.ravel(np.asarray(x))
                                    for x in jax.tree.leaves(r.state.params)])
    return out


TRAIN = r"""
import sys
import numpy as np
from tests.test_platform import _train_both
np.savez(sys.argv[1], **_train_both())
"""


def test_the_suites_code_generator_trains_what_the_engines_default_does(tmp_path):
    """The suite compiles with XLA:CPU's older fusion emitters (conftest.py,
    `jaxrl.platform.FAST_COMPILE_XLA_FLAGS`); users' runs use XLA's default ones. PPO and DQN
    trained under each (here, and in a fresh process without the flag) end at the same
    parameters up to float rounding (measured: 3e-7 of the largest parameter), not bitwise."""
    from jaxrl.platform import FAST_COMPILE_XLA_FLAGS

    if FAST_COMPILE_XLA_FLAGS not in os.environ["XLA_FLAGS"]:
        pytest.skip("XLA_FLAGS chose the emitters (conftest.py leaves them alone)")
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[1]),
                                         env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", TRAIN, str(tmp_path / "default.npz")], env=env,
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    default, suite = np.load(tmp_path / "default.npz"), _train_both()
    for algo in ("ppo", "dqn"):
        a, b = suite[algo], default[algo]
        assert a.shape == b.shape
        assert not np.array_equal(a, b), "the flag changed nothing: is it still read?"
        assert np.max(np.abs(a - b)) <= 1e-5 * np.max(np.abs(b)), algo
