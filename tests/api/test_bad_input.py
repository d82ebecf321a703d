"""Bad input is refused before anything compiles: out-of-range hyperparameters (the intervals
declared with the fields), run arguments that are not whole numbers, output paths that cannot be
written. The Python API raises a `ConfigError` (or `OutputPathError`) whose one-line message
names the problem; the CLI prints one line on stderr and exits 2. Nothing here trains."""

import dataclasses
import math
import os
import stat

import numpy as np
import pytest

import jaxrl
from jaxrl import algos
from jaxrl.cli import main
from jaxrl.config import ConfigError, allowed, declared_intervals, numeric_fields
from jaxrl.output_paths import OutputPathError, check_file, check_folder
from jaxrl.run_args import check_run_args

UNWRITABLE = "/proc/x.json"  # a folder that exists, where nothing can be created (even by root)


def default_config(name: str):
    env = "CartPole-v1" if "discrete" in algos.get(name).action_kinds else "Pendulum-v1"
    return algos.get(name).default_config(env)


def fields_with_bounds():
    """``(algo, field, interval)`` for every numeric field of every algorithm with a finite
    bound (the ones a wrong value can cross)."""
    for name in algos.ALGORITHMS:
        for field, typ in numeric_fields(algos.get(name).config_cls).items():
            interval = allowed(algos.get(name).config_cls, field, typ)
            if math.isfinite(interval.low) or math.isfinite(interval.high):
                yield pytest.param(name, field, typ, interval, id=f"{name}.{field}")


def outside(interval, typ):
    """Values just outside each finite end of ``interval``."""
    step = 1 if typ is int else 1e-3
    if math.isfinite(interval.low):
        yield typ(interval.low if interval.low_open else interval.low - step)
    if math.isfinite(interval.high):
        yield typ(interval.high if interval.high_open else interval.high + step)


def closed_ends(interval):
    return [end for end, is_open in ((interval.low, interval.low_open),
                                     (interval.high, interval.high_open))
            if math.isfinite(end) and not is_open]


# -- the range table ----------------------------------------------------------------------------
def test_every_float_field_of_every_algorithm_has_a_range():
    """A new hyperparameter cannot go unchecked: it is declared with its interval (``valid=``;
    ``ANY`` if it may be any finite number). Int fields are counts (>= 1) unless declared
    otherwise."""
    missing = sorted({f"{name}.{field}" for name in algos.ALGORITHMS
                      for field, typ in numeric_fields(algos.get(name).config_cls).items()
                      if typ is float
                      and declared_intervals(algos.get(name).config_cls)[field] is None})
    assert not missing, f"declare these fields with valid=...: {missing}"


@pytest.mark.parametrize("name, field, typ, interval", list(fields_with_bounds()))
def test_out_of_range_is_refused_with_field_value_and_range(name, field, typ, interval):
    config = default_config(name)
    for bad in outside(interval, typ):
        value = (bad,) if isinstance(getattr(config, field), tuple) else bad
        with pytest.raises(ConfigError) as err:
            config.replace(**{field: value})
        message = str(err.value)
        assert "\n" not in message
        assert f"{field}={value!r}" in message and str(interval) in message, message


@pytest.mark.parametrize("algo, overrides", [
    ("ppo", {"gamma": 1.0, "gae_lambda": 0.0}),  # undiscounted finite horizon; TD(0)
    ("ppo", {"gae_lambda": 1.0, "ent_coef": 0.0, "vf_coef": 0.0}),  # Monte Carlo; terms off
    ("a2c", {"gamma": 0.0, "rmsprop_decay": 0.0}),
    ("dqn", {"tau": 1.0, "eps_start": 1.0, "eps_end": 0.0, "eps_decay_fraction": 0.0,
             "per_alpha": 0.0, "per_beta": 1.0, "learning_starts": 0}),
    ("dqn", {"per_alpha": 1.0, "per_beta": 0.0}),
    ("td3", {"exploration_noise": 0.0, "target_noise": 0.0, "target_noise_clip": 0.0}),
    ("trpo", {"cg_damping": 0.0}),
    ("sac", {"target_entropy_scale": -1.0, "tau": 1.0}),
])
def test_legitimate_endpoints_are_accepted(algo, overrides):
    config = default_config(algo).replace(**overrides)
    assert all(getattr(config, k) == v for k, v in overrides.items())


def test_closed_ends_of_every_float_range_are_legal():
    for name in algos.ALGORITHMS:
        config = default_config(name)
        for field, typ in numeric_fields(type(config)).items():
            if typ is float:
                for end in closed_ends(allowed(type(config), field, typ)):
                    assert getattr(config.replace(**{field: end}), field) == end


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_refused(value):
    with pytest.raises(ConfigError, match=r"learning_rate=.* must be > 0"):
        default_config("ppo").replace(learning_rate=value)


def test_a_config_built_directly_is_checked_too():
    with pytest.raises(ConfigError, match=r"gamma=1\.5 is out of range for PPOConfig: must be in "
                                          r"\[0, 1\]"):
        dataclasses.replace(default_config("ppo"), gamma=1.5)
    with pytest.raises(ConfigError, match=r"hidden=\(64, 0\).*each element must be >= 1"):
        algos.get("dqn").config_cls(hidden=(64, 0))


# -- the Python API -----------------------------------------------------------------------------
def test_train_refuses_an_out_of_range_hyperparameter(_isolated_run_store):
    before = sorted(os.listdir(_isolated_run_store))
    with pytest.raises(ConfigError, match=r"^learning_rate=-1\.0 is out of range for PPOConfig: "
                                          r"must be > 0$"):
        jaxrl.train("ppo", env="CartPole-v1", learning_rate=-1)
    assert sorted(os.listdir(_isolated_run_store)) == before  # no run recorded


def test_sweep_checks_every_grid_value():
    with pytest.raises(ConfigError, match=r"gae_lambda=1\.5 .* must be in \[0, 1\]"):
        jaxrl.sweep("ppo", env="CartPole-v1", seeds=1, total_steps=2048, store=False,
                    grid={"gae_lambda": [0.95, 1.0, 1.5]})


def test_make_train_checks_ranges_and_total_steps():
    with pytest.raises(ConfigError, match=r"clip_eps=0\.0 .* must be > 0"):
        jaxrl.make_train("ppo", "CartPole-v1", total_steps=2048, clip_eps=0.0)
    with pytest.raises(ConfigError, match=r"total_steps must be a whole number, got 2048\.5"):
        jaxrl.make_train("ppo", "CartPole-v1", total_steps=2048.5)


@pytest.mark.parametrize("kwargs, message", [
    ({"seeds": 2.5}, "seeds must be a whole number, got 2.5"),
    ({"seeds": True}, "seeds must be a whole number, got True"),
    ({"seeds": "2"}, "seeds must be a whole number, got '2'"),
    ({"seeds": None}, "seeds must be a whole number, got None"),
    ({"seeds": 0}, "seeds must be >= 1, got 0"),
    ({"seeds": -3}, "seeds must be >= 1, got -3"),
    ({"total_steps": 1000.5}, "total_steps must be a whole number, got 1000.5"),
    ({"total_steps": 0}, "total_steps must be >= 1, got 0"),
    ({"seed": 1.0}, "seed must be a whole number, got 1.0"),
    ({"seed": -1}, "seed must be in [0, 4294967296), got -1"),
    ({"seed": 2**32}, "seed must be in [0, 4294967296), got 4294967296"),
])
def test_train_refuses_run_arguments_that_are_not_whole_numbers(kwargs, message):
    for store in (False, True):
        with pytest.raises(ConfigError) as err:
            jaxrl.train("ppo", env="CartPole-v1", store=store, **kwargs)
        assert str(err.value) == message
    with pytest.raises(ConfigError) as err:
        jaxrl.sweep("ppo", env="CartPole-v1", store=False, grid={"ent_coef": [0.0]}, **kwargs)
    assert str(err.value) == message


def test_whole_float_budgets_and_numpy_ints_are_accepted():
    check_run_args(seeds=np.int64(4), total_steps=1e6, seed=np.int32(7))


def test_bench_refuses_a_fractional_seed_count():
    with pytest.raises(ConfigError, match=r"seeds must be a whole number, got 2\.5"):
        jaxrl.bench("classic", seeds=2.5)


# -- output paths -------------------------------------------------------------------------------
def test_output_checks_leave_no_file_and_never_touch_an_existing_one(tmp_path):
    existing = tmp_path / "old.json"
    existing.write_text("keep me")
    check_file(existing)
    check_file(tmp_path / "new.json")
    check_folder(tmp_path / "a" / "b")
    assert sorted(os.listdir(tmp_path)) == ["old.json"] and existing.read_text() == "keep me"


@pytest.mark.parametrize("check, path, fragment", [
    (check_file, UNWRITABLE, "cannot create a file in '/proc'"),
    (check_file, "/nonexistent-dir/x.json", "folder '/nonexistent-dir' does not exist"),
    (check_folder, "/proc/out", "cannot create a file in '/proc'"),
    (check_folder, "/etc/hostname/out", "'/etc/hostname' is a file, not a folder"),
])
def test_unwritable_outputs_are_refused(check, path, fragment):
    with pytest.raises(OutputPathError, match="is not writable") as err:
        check(path)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_an_existing_output_that_is_not_a_regular_file_is_never_replaced(tmp_path, capsys):
    """The atomic write renames over its target: onto a FIFO, a device or a link to one it
    would replace the node itself (as root, ``--json /dev/null`` would replace /dev/null)."""
    fifo, link = tmp_path / "fifo", tmp_path / "null"
    os.mkfifo(fifo)
    link.symlink_to("/dev/null")
    for path, kind in ((fifo, "a FIFO"), (link, "a character device")):
        with pytest.raises(OutputPathError, match=f"it is {kind}, not a regular file"):
            check_file(path)
        assert main(["train", "ppo", "--json", str(path)]) == 2
        assert f"it is {kind}" in capsys.readouterr().err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.readlink(link) == "/dev/null"


# -- the CLI: one line on stderr, exit 2 ----------------------------------------------------------
@pytest.mark.parametrize("argv, fragment", [
    # --json / --out that cannot be written: refused before anything is resolved or compiled
    (["train", "ppo", "--env", "CartPole-v1", "--json", UNWRITABLE], "--json '/proc/x.json' is "
                                                                     "not writable"),
    (["sweep", "ppo", "--grid", "ent_coef=0,0.01", "--json", UNWRITABLE], "not writable"),
    (["bench", "classic", "--json", UNWRITABLE], "not writable"),
    (["bench", "classic", "--out", "/proc/report"], "--out '/proc/report' is not writable"),
    (["train", "ppo", "--json", "/"], "it is a folder"),
    # out-of-range hyperparameters, in train and in every grid value of a sweep
    (["train", "ppo", "--set", "learning_rate=-1"],
     "learning_rate=-1.0 is out of range for PPOConfig: must be > 0"),
    (["train", "ppo", "--set", "gamma=1.01"], "gamma=1.01 is out of range for PPOConfig: must be "
                                              "in [0, 1]"),
    (["train", "ppo", "--set", "ent_coef=-0.01"], "must be >= 0"),
    (["train", "ppo", "--set", "max_grad_norm=0"], "max_grad_norm=0.0"),
    (["train", "ppo", "--set", "num_minibatches=0"], "num_minibatches=0 is out of range"),
    (["train", "dqn", "--set", "tau=0"], "tau=0.0 is out of range for DQNConfig: must be in (0, "
                                         "1]"),
    (["train", "dqn", "--set", "eps_end=1.5"], "eps_end=1.5"),
    (["train", "dqn", "--set", "per_alpha=-0.1"], "per_alpha=-0.1"),
    (["train", "sac", "--env", "Pendulum-v1", "--set", "alpha_lr=0"], "alpha_lr=0.0"),
    (["train", "trpo", "--set", "backtrack_coef=1"], "must be in (0, 1)"),
    (["probe", "bc"], "bc imitates an expert's demonstrations and learns no reward"),
    (["sweep", "ppo", "--grid", "learning_rate=3e-4,-1"], "learning_rate=-1.0 is out of range"),
    (["sweep", "ppo", "--grid", "clip_eps=0.2", "--set", "gae_lambda=2"], "gae_lambda=2.0"),
    # seeds, budget and root seed must be whole numbers in range
    (["train", "ppo", "--seeds", "2.5"], "argument --seeds: must be a whole number, got '2.5'"),
    (["train", "ppo", "--seeds", "0"], "seeds must be >= 1, got 0"),
    (["train", "ppo", "--seeds", "-2"], "seeds must be >= 1, got -2"),
    (["train", "ppo", "--total-steps", "1000.5"], "argument --total-steps: must be a whole number"),
    (["train", "ppo", "--seed", "1.5"], "argument --seed: must be a whole number"),
    (["train", "ppo", "--seed", "-1"], "seed must be in [0, 4294967296), got -1"),
    (["sweep", "ppo", "--grid", "ent_coef=0", "--seeds", "0"], "seeds must be >= 1"),
    (["bench", "classic", "--seeds", "2.5"], "argument --seeds: must be a whole number"),
    (["sweep", "ppo", "--grid", "ent_coef=0", "--gpus-per-task", "1"],
     "--address, --gpus-per-task and --checkpoint-dir need --backend ray"),
    (["bench", "classic", "--backend", "ray", "--cpus-per-task", "0"],
     "--cpus-per-task must be > 0"),
    (["sweep", "ppo", "--grid", "ent_coef=0", "--configs-per-group", "0"],
     "configs_per_group must be >= 1, got 0"),
    (["train"], "the following arguments are required: algo (see jaxrl train --help)"),
])
def test_cli_bad_input_is_one_line_and_exit_2(argv, fragment, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("jaxrl: ") and fragment in err[0], err
    assert "Traceback" not in captured.out
