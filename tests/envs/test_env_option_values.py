"""Env options that count (``episode_length``, ``time_limit``, ...: `envs.options`) are whole
numbers in the int32 range, checked where options enter: `envs.make`, `jaxrl train --env-arg`
(one line, no traceback), the run's recorded spec (``2.0`` recorded as ``2``) and a bench
suite's ``env_kwargs`` (naming the file and the entry). No training."""

import json

import pytest
import yaml

import envs
from envs.options import EnvOptionError, checked
from jaxrl.engine.spec import single_spec
from jaxrl.studies.bench.suite import SuiteError, load_suite
from tests.runs.test_faults import cli, one_line_error

BAD = [float("inf"), float("nan"), -5, 0, 2.5, True, "3", None, 2**31, 1e400]


@pytest.mark.parametrize("value", BAD)
def test_a_count_option_that_is_not_a_whole_number_in_range_is_one_line(value):
    with pytest.raises(EnvOptionError) as err:
        checked("brax:hopper", {"episode_length": value})
    message = str(err.value)
    assert "\n" not in message and f"episode_length={value!r}" in message
    assert "a positive whole number of agent steps up to 2147483647" in message


def test_a_whole_float_is_taken_as_the_int_and_other_options_pass():
    out = checked("brax:hopper", {"episode_length": 2.0, "action_repeat": 3,
                                  "reset_noise_scale": 0.5})
    assert out == {"episode_length": 2, "action_repeat": 3, "reset_noise_scale": 0.5}
    assert type(out["episode_length"]) is int
    assert checked("CartPole-v1", None) is None
    # options that may be 0, or null, say so; Atari's own counts hold for Atari names only
    assert checked("brax:hopper", {"prepared_starts": 0}) == {"prepared_starts": 0}
    assert checked("atari:Pong", {"num_threads": None, "noop_max": 0, "max_frames": 4e4}) == {
        "num_threads": None, "noop_max": 0, "max_frames": 40_000}
    with pytest.raises(EnvOptionError, match=r"stack=0 .* positive whole number of frames"):
        checked("atari:Pong", {"stack": 0})
    assert checked("MyEnv", {"stack": 0.5}) == {"stack": 0.5}  # not an Atari option there


def test_make_checks_the_counts_of_every_family():
    _, params = envs.make("probe:truncation", time_limit=3.0)
    assert params.time_limit == 3 and type(params.time_limit) is int
    for name, option in [("probe:truncation", "time_limit"), ("goal:BitFlip", "n_bits"),
                         ("goal:PointReach", "max_steps_in_episode")]:
        for value in (2.5, 0, float("inf")):
            with pytest.raises(EnvOptionError, match=f"{option}="):
                envs.make(name, **{option: value})


@pytest.mark.parametrize("value, shown", [(".inf", "inf"), ("-5", "-5"), ("0", "0"),
                                          ("2.5", "2.5")])
def test_train_with_a_bad_episode_length_is_one_line(capsys, tmp_path, value, shown):
    """Before: .inf was an OverflowError traceback, -5 and 0 trained a run in which no
    evaluation episode ends, 2.5 trained 2 and recorded 2.5."""
    rc, _, err = cli(capsys, "train", "ppo", "--env", "brax:hopper", "--env-arg",
                     f"episode_length={value}", "--total-steps", "512", "--no-progress",
                     "--runs-dir", tmp_path)
    one_line_error(rc, err, f"env option episode_length={shown} is not allowed")
    assert not any(tmp_path.iterdir())  # nothing recorded


def test_the_recorded_spec_holds_the_int():
    spec = single_spec("ppo", "brax:hopper", 1, 1000, env_kwargs={"episode_length": 50.0})
    assert json.dumps(spec.to_dict()["env_kwargs"]) == '{"episode_length": 50}'


def _suite(tmp_path, env_kwargs):
    path = tmp_path / "opts.yaml"
    path.write_text(yaml.safe_dump({"name": "opts", "entries": [
        {"algo": "ppo", "env": "brax:reacher", "total_steps": 1000, "env_kwargs": env_kwargs,
         "reference": {"value": 1.0, "measure": "final_eval", "source": "a test"}}]}))
    return str(path)


@pytest.mark.parametrize("value", [float("inf"), -5, 0, 2.5])
def test_a_suite_entry_with_a_bad_count_option_is_refused_when_loaded(tmp_path, value):
    with pytest.raises(SuiteError) as err:
        load_suite(_suite(tmp_path, {"episode_length": value}))
    message = str(err.value)
    assert message.startswith("opts.yaml: entry 1 (ppo on brax:reacher): env option "
                              f"episode_length={value!r} is not allowed"), message
    assert "\n" not in message


def test_a_suite_entry_records_a_whole_float_as_the_int(tmp_path):
    entry = load_suite(_suite(tmp_path, {"episode_length": 50.0})).entries[0]
    assert entry.env_kwargs == {"episode_length": 50}
    assert type(entry.env_kwargs["episode_length"]) is int
