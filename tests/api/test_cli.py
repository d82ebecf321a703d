"""CLI: bad input is one line and a non-zero exit; --json payloads have the promised keys."""

import json
import subprocess
import sys

import pytest

from jaxrl.cli import main


@pytest.mark.parametrize("argv, fragment", [
    (["train", "ppa"], "Unknown algorithm 'ppa'"),
    (["train", "ppo", "--env", "CartPol-v1"], "CartPole-v1"),
    (["train", "ppo", "--seeds", "0"], "seeds must be >= 1"),
    (["train", "ppo", "--set", "lr=3"], "unknown config key 'lr'"),
    (["train", "ppo", "--set", "learning_rate=fast"], "expects float"),
    (["train", "ppo", "--set", "num_envs=2.5"], "expects int"),
    (["train", "ppo", "--set", "gamma"], "--set expects key=value"),
    (["train", "ppo", "--total-steps", "10"], "too small for one update"),
    (["train", "ppo", "--json", "/nonexistent-dir/x.json"], "not writable"),
    (["train", "dqn", "--env", "Pendulum-v1"], "dqn handles discrete actions"),
    (["train", "sac", "--env", "CartPole-v1"], "has discrete actions"),
    (["train", "ppo", "--env-arg", "bogus=1"], "with option(s) bogus"),
    (["train", "ppo", "--env-arg", "observation_indices=[7]"], "do not index"),
    (["train", "ppo", "--env-arg", "reward_scale=0"], "reward_scale must be"),
    (["train", "ppo", "--env-arg", "x=["], "is not a YAML value"),
    (["train", "ppo", "--set", "rnn=transformer"], "rnn must be one of"),
    (["probe", "nope"], "Unknown algorithm"),
    (["probe", "ppo", "--rungs", "nope"], "unknown probe rung"),
])
def test_bad_input_is_one_line(argv, fragment, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err


def test_train_json(tmp_path, capsys):
    out = tmp_path / "run.json"
    rc = main(["train", "ppo", "--env", "CartPole-v1", "--seeds", "2", "--total-steps", "2048",
               "--set", "num_steps=64", "--json", str(out), "--no-progress"])
    assert rc == 0
    payload = json.loads(out.read_text())
    for key in ("algo", "env", "seeds", "total_steps_per_seed", "compile_seconds", "run_seconds",
                "env_steps_per_second", "final_eval_return", "config"):
        assert key in payload
    assert len(payload["final_eval_return"]) == 2 and payload["config"]["num_steps"] == 64
    printed = capsys.readouterr().out
    assert "IQM" in printed and "env-steps/s" in printed


def test_probe_json(tmp_path):
    out = tmp_path / "probe.json"
    # 4 seeds: the same programs as test_ppo's ladder, so one of the two hits the compile cache.
    rc = main(["probe", "ppo", "--seeds", "4", "--rungs", "value", "obs-action", "--json", str(out)])
    payload = json.loads(out.read_text())
    assert payload["algo"] == "ppo" and len(payload["rungs"]) == 2
    for rung in payload["rungs"]:
        assert {"name", "passed", "measured", "expected", "tolerance"} <= set(rung)
    assert rc == (0 if all(r["passed"] for r in payload["rungs"]) else 1)


def test_console_script_bad_input_has_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", "train", "ppo", "--env", "nope"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_env_args_are_yaml_values():
    from jaxrl.cli.common import parse_env_args

    assert parse_env_args(None) is None
    assert parse_env_args(["reward_scale=1000", "observation_indices=[0, 2]",
                           "preset=machado"]) == {"reward_scale": 1000,
                                                  "observation_indices": [0, 2],
                                                  "preset": "machado"}
