"""CLI: bad input is one line and a non-zero exit; --json payloads have the promised keys."""

import json
import subprocess
import sys

import numpy as np
import pytest

from jaxrl import algos
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
    (["train", "ppo", "--env-arg", "x=["], "--env-arg x: '[' is not valid YAML"),
    (["train", "ppo", "--set", "rnn=transformer"], "rnn must be one of"),
    (["probe", "nope"], "Unknown algorithm"),
    (["probe", "ppo", "--rungs", "nope"], "unknown probe rung"),
    (["envs", "--family", "nope"], "invalid choice: 'nope'"),
    (["config", "nope"], "Unknown algorithm 'nope'"),
    (["config", "ppo", "--env", "CartPol-v1"], "CartPole-v1"),
    (["config", "ppo", "--json", "/nonexistent-dir/x.json"], "not writable"),
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
    assert "git_commit" in payload["about"] and payload["about"]["device"]["device_count"] >= 1
    assert len(payload["final_eval_return"]) == 2 and payload["config"]["num_steps"] == 64
    assert set(payload["compile_parts"]) == {"init", "chunk", "eval"}
    parts = payload["compile_parts"].values()  # compiled side by side: the wait is the longest
    assert max(parts) - 1e-3 <= payload["compile_seconds"] <= sum(parts) + 0.05
    printed = capsys.readouterr().out
    assert "IQM" in printed and "env-steps/s" in printed


def test_probe_json(tmp_path):
    out = tmp_path / "probe.json"
    # 4 seeds: the same programs as test_ppo's ladder, so one of the two hits the compile cache.
    rc = main(["probe", "ppo", "--seeds", "4", "--rungs", "value", "obs-action", "--json", str(out)])
    payload = json.loads(out.read_text())
    assert payload["algo"] == "ppo" and len(payload["rungs"]) == 2
    assert payload["seeds"] == 4 and "git_commit" in payload["about"]
    for rung in payload["rungs"]:
        assert {"name", "passed", "measured", "expected", "tolerance"} <= set(rung)
    assert rc == (0 if all(r["passed"] for r in payload["rungs"]) else 1)


def test_sweep_json_holds_each_configs_seeds_and_where_it_ran(tmp_path):
    """A stored sweep keeps no results in memory: the per-seed returns come from the runs'
    records."""
    out = tmp_path / "sweep.json"
    rc = main(["sweep", "ppo", "--env", "probe:value", "--seeds", "2", "--total-steps", "512",
               "--grid", "learning_rate=0.001,0.002", "--runs-dir", str(tmp_path / "runs"),
               "--no-progress", "--json", str(out)])
    payload = json.loads(out.read_text())
    assert rc == 0 and "git_commit" in payload["about"]
    by_lr = {c["overrides"]["learning_rate"]: c for c in payload["configs"]}
    assert set(by_lr) == {"0.001", "0.002"}  # as the grid wrote them
    for config in by_lr.values():
        assert len(config["final_eval_return"]) == 2 and config["env_steps_per_second"] > 0
    table_means = {row["learning_rate"]: row["mean"] for row in payload["table"]}
    for lr, config in by_lr.items():
        assert np.isclose(np.mean(config["final_eval_return"]), table_means[lr])


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


# -- help, envs, config: what there is, without training -------------------------------------------
ALGO_LIST = f"one of: {', '.join(sorted(algos.BUILT_IN))}"


def test_help_names_the_algorithms(capsys):
    for command in ("train", "sweep", "probe", "config"):
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0
        assert ALGO_LIST in " ".join(capsys.readouterr().out.split()), command


def test_help_names_are_the_registry_names():
    import envs
    import jaxrl.algos
    from jaxrl.cli import names

    assert tuple(sorted(jaxrl.algos.ALGORITHMS)) == names.ALGORITHMS
    families = {envs.env_family(n) for n in envs.registered_names(suites=())}
    suites = {f.name for f in envs.families.FAMILIES if f.adapter}
    assert families | suites == set(names.ENV_FAMILIES)


def test_help_loads_no_jax():
    """``jaxrl --help`` and each command's help answer without loading JAX (of envs, only the
    JAX-free family table)."""
    code = ("import sys\nfrom jaxrl.cli import main\n"
            "for argv in (['--help'], ['train', '--help'], ['envs', '--help'], "
            "['config', '--help'], ['runs', 'ls', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'envs')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert ALGO_LIST in " ".join(proc.stdout.split())
    assert proc.stdout.strip().splitlines()[-1] == "['envs', 'envs.families']"


def _listed(out: str) -> set[str]:
    """The names ``jaxrl envs`` printed (its indented lines)."""
    return {name for line in out.splitlines() if line.startswith("  ") for name in line.split()}


def test_envs_lists_each_family(capsys):
    assert main(["envs"]) == 0
    out = capsys.readouterr().out
    listed = _listed(out)
    assert {"CartPole-v1", "Pendulum-v1", "probe:value", "probe:memory",
            "Breakout-MinAtar", "SpaceInvaders-MinAtar"} <= listed
    assert not any(name.startswith("gymnax:") for name in listed)  # each gymnax env once
    assert "prefix gymnax:" in out  # ... and the header names the prefix
    try:
        import brax.envs  # noqa: F401
        assert "brax:hopper" in listed
    except ImportError:
        assert not any(name.startswith("brax:") for name in listed)
    try:
        import ale_py  # noqa: F401
        assert {"atari:Pong", "atari:Breakout", "atari:SpaceInvaders"} <= listed
    except ImportError:
        assert 'pip install -e ".[atari]"' in out


def test_envs_one_family(capsys):
    assert main(["envs", "--family", "minatar"]) == 0
    out = capsys.readouterr().out
    assert _listed(out) == {"Asterix-MinAtar", "Breakout-MinAtar", "Freeway-MinAtar",
                            "Seaquest-MinAtar", "SpaceInvaders-MinAtar"}
    headers = [line for line in out.splitlines() if line and not line.startswith("  ")]
    assert headers[1:] == ["minatar (5): MinAtar games (gymnax): 10x10 grids"]


def test_envs_atari_names_are_what_make_takes():
    pytest.importorskip("ale_py")
    import envs
    from envs import atari
    names = envs.registry.suite_tasks(envs.families.BY_NAME["atari"])
    assert "atari:Pong" in names and "atari:MsPacman" in names
    # each printed name maps back to its ROM (CamelCase where that round-trips, else the ROM)
    assert sorted(atari.rom_name(n.removeprefix("atari:")) for n in names) == atari.games()
    env, _ = envs.make("atari:Pong")
    assert env.num_actions == 6


def _config_table(out: str) -> dict[str, tuple[str, str, str]]:
    """``jaxrl config``'s table as ``{key: (value, kind, doc)}``, cut at the header's columns."""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("key "))
    cols = [lines[header].index(c) for c in ("value", "kind", "doc")]
    return {line[:cols[0]].strip(): (line[cols[0]:cols[1]].strip(),
                                     line[cols[1]:cols[2]].strip(), line[cols[2]:].strip())
            for line in lines[header + 1:]}


def test_config_lists_every_key_with_kind(tmp_path, capsys):
    from jaxrl.algos.ppo import PPOConfig

    out = tmp_path / "config.json"
    assert main(["config", "ppo", "--env", "CartPole-v1", "--json", str(out)]) == 0
    table = _config_table(capsys.readouterr().out)
    assert list(table) == PPOConfig.field_names()
    assert table["learning_rate"][1] == "traced"
    assert table["num_envs"][:2] == ("4", "static")
    assert table["rnn"][:2] == ("none", "static") and "gru" in table["rnn"][2]
    assert table["hidden"][0] == "(64, 64)"
    payload = json.loads(out.read_text())
    assert payload["algo"] == "ppo" and payload["family"] == "discrete"
    keys = {row["key"]: row for row in payload["keys"]}
    assert keys["num_envs"]["value"] == 4 and keys["gamma"]["kind"] == "traced"
    assert set(keys) == set(table)


def test_config_follows_the_env_family(capsys):
    assert main(["config", "ppo", "--env", "atari:Pong"]) == 0
    table = _config_table(capsys.readouterr().out)
    assert table["torso"][:2] == ("nature_cnn", "static")
    assert main(["config", "sac", "--env", "Pendulum-v1"]) == 0
    assert "family continuous" in capsys.readouterr().out


def test_config_unknown_atari_game_is_one_line(capsys):
    pytest.importorskip("ale_py")
    assert main(["config", "ppo", "--env", "atari:Pongg"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "atari:Pong" in err[0], err


def test_envs_without_ale_py_says_how_to_get_it(monkeypatch, capsys):
    from envs import atari

    def missing():
        raise atari.AtariUnavailableError("no ale-py")

    monkeypatch.setattr(atari, "games", missing)
    assert main(["envs", "--family", "atari"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == 'atari: the atari family is not installed (no ale-py): pip install -e ".[atari]"'


def test_config_file_then_set(tmp_path, capsys):
    """`--config FILE.yaml` supplies config keys, typed as YAML reads them; `--set` wins over
    the file; a bad key, file or mapping is one line before anything compiles."""
    from types import SimpleNamespace

    from jaxrl.cli.common import run_overrides

    path = tmp_path / "ppo.yaml"
    path.write_text("learning_rate: 1.0e-3\nhidden: [32, 32]\nrnn: gru\n")
    args = SimpleNamespace(config=str(path), set=["learning_rate=3e-4"])
    assert run_overrides(args) == {"learning_rate": "3e-4", "hidden": [32, 32], "rnn": "gru"}
    bad = tmp_path / "bad.yaml"
    for text, fragment in (("lr: 3\n", "unknown config key 'lr'"),
                           ("- 1\n- 2\n", "expected a mapping"),
                           ("a: [1\n", "not valid YAML (line")):
        bad.write_text(text)
        assert main(["train", "ppo", "--config", str(bad), "--no-store"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0], err
    assert main(["train", "ppo", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read it" in capsys.readouterr().err
    assert main(["train", "ppo", "--set", "total_steps=5"]) == 2
    assert "--total-steps" in capsys.readouterr().err
    # `jaxrl config --yaml` writes a file that --config reads back as the same config
    assert main(["config", "ppo", "--env", "atari:Pong", "--yaml"]) == 0
    path.write_text(capsys.readouterr().out)
    from jaxrl.algos import ppo

    keys = {k: tuple(v) if isinstance(v, list) else v
            for k, v in run_overrides(SimpleNamespace(config=str(path), set=[])).items()}
    assert ppo.PPOConfig(**keys) == ppo.default_config("atari:Pong")


def test_committed_presets_follow_the_code():
    """presets/ALGO/FAMILY.yaml are the defaults `jaxrl config ALGO --yaml` prints for one env
    of each family; regenerate with
    ``python -c "from jaxrl.cli.discover import write_presets; write_presets()"``."""
    from pathlib import Path

    from jaxrl.cli.discover import preset_files

    root = Path(__file__).resolve().parents[2]
    expected = preset_files()
    committed = {str(p.relative_to(root)): p.read_text() for p in root.glob("presets/*/*.yaml")}
    assert sorted(committed) == sorted(expected)
    stale = [rel for rel, text in expected.items() if committed[rel] != text]
    assert not stale, f"stale presets (regenerate them): {stale}"


def test_config_takes_a_preset_by_name():
    """``--config ALGO/NAME`` reads presets/ALGO/NAME.yaml: the named preset's whole config."""
    from types import SimpleNamespace

    from jaxrl.algos import references
    from jaxrl.cli.common import UsageError, run_overrides
    from jaxrl.cli.discover import reference_config

    keys = run_overrides(SimpleNamespace(config="sac/spinningup-mujoco", set=["batch_size=64"]))
    config = reference_config(references.PRESETS["sac/spinningup-mujoco"])
    assert keys.pop("batch_size") == "64"  # --set values are coerced when the config is built
    assert config.replace(**keys) == config  # every other key is the preset's
    assert not config.autotune_alpha and config.init_alpha == 0.2 and config.batch_size == 100
    with pytest.raises(UsageError, match="unknown preset 'sac/nothing'; sac's presets: sac/brax"):
        run_overrides(SimpleNamespace(config="sac/nothing", set=[]))


def test_demos_flag_is_the_demos_config_key():
    from jaxrl.cli import build_parser
    from jaxrl.cli.common import run_overrides

    args = build_parser().parse_args(["train", "gail", "--env", "Pendulum-v1", "--demos", "d-1",
                                      "--set", "grad_penalty=10"])
    assert run_overrides(args) == {"demos": "d-1", "grad_penalty": "10"}


def test_the_summary_says_when_a_seed_finished_no_evaluation_episode(capsys):
    """A seed whose final evaluation finished no episode is NaN; the summary's mean and IQM
    are over the others, and it says so instead of passing them off as every seed's."""
    from types import SimpleNamespace

    from jaxrl.cli.common import print_result

    base = dict(algo="a2c", env="atari:Breakout", seeds=3, total_steps_per_seed=100,
                compile_seconds=1.0, compile_source="compiled", compile_phases={}, run_seconds=2.0,
                env_steps_per_second=50.0, devices="1 x cpu")
    print_result(SimpleNamespace(**base, final_eval_return=[0.0, float("nan"), 4.0]))
    out = capsys.readouterr().out
    assert "nan" in out and "2.00" in out  # the mean of the two that finished
    assert "over 2 of 3 seeds" in out
    print_result(SimpleNamespace(**base, final_eval_return=[1.0, 2.0, 3.0]))
    assert "of 3 seeds" not in capsys.readouterr().out
