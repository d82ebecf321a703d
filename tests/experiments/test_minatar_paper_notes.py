"""The minatar_paper notes' figures hold in the committed report and the run's record
(benchmarks/minatar-paper-cpu/progress/)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from jaxrl import stats
from tests.experiments.reports import flat_notes
from tests.experiments.test_minatar_notes import iqm_curve

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/minatar-paper-cpu"
FLAT = flat_notes(HERE)
BREAKOUT = HERE / "progress/20261205-001723-pqn-gymnax-Breakout-MinAtar-ad4ef6"


def entry(path: Path, name: str) -> dict:
    (row,) = [e for e in json.loads(path.read_text())["entries"] if e["entry"] == name]
    return row


SPACE_INVADERS = HERE / "progress/20261205-022617-pqn-gymnax-SpaceInvaders-MinAtar-b931c3"
ASTERIX = HERE / "progress/20261205-030136-pqn-gymnax-Asterix-MinAtar-c89ee2"


def _quoted_row(game: str, run: Path, algo: str = "pqn") -> tuple[dict, np.ndarray]:
    """A finished paper-env row: its run in the progress folder, in the paper's env, and the
    notes' headline, per-seed returns, greedy evaluation and cost, all from its record."""
    row = entry(HERE / "results.json", f"{algo}-sticky/gymnax:{game}-MinAtar")
    meta = json.loads((run / "run.json").read_text())
    assert row["run_id"] == run.name and meta["status"] == "finished"
    assert meta["group"]["spec"]["env_kwargs"] == {"sticky_action_prob": 0.1,
                                                   "use_minimal_action_set": False}
    last100 = np.asarray(meta["train_return_last100"])
    assert np.allclose(row["per_seed"], last100) and len(last100) == 8
    lo, hi = row["mean_ci_low"], row["mean_ci_high"]
    name, bar, verdict, epsilon = {"pqn": (game, "DQN", "above", " (epsilon 0.05)"),
                                   "a2c": (f"A2C {game}", "AC(lambda)", "below", "")}[algo]
    assert (f"**{name}, the paper's env: {last100.mean():.1f} [{lo:.1f}, {hi:.1f}] "
            f"(IQM {row['iqm']:.1f}), against the paper's {bar} at {row['reference']:g}: "
            f"{verdict}.**") in FLAT and row["verdict"].startswith(verdict)
    assert (f"Per seed, the mean of the last 100 training episodes{epsilon}: "
            + ", ".join(f"{v:.1f}" for v in last100)) in FLAT
    greedy = np.asarray(meta["final_eval_return"])
    assert f"mean {greedy.mean():.1f}, per seed {greedy.min():.1f} to {greedy.max():.1f}" in FLAT
    assert (f"{meta['run_seconds']:,.0f} s of training, {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in FLAT
    return row, last100


def _curve_says(row: dict, crossing: float, levels: dict[float, float]) -> None:
    """The IQM curve crosses the reference near ``crossing`` env steps and passes ``levels``
    ({env steps: IQM, rounded}) as the notes say."""
    steps, iqm = iqm_curve(row)
    assert abs(steps[np.argmax(iqm >= row["reference"])] - crossing) < 0.1e6
    for at, level in levels.items():
        assert round(iqm[np.argmin(abs(steps - at))]) == level


def test_the_breakout_row():
    row, last100 = _quoted_row("Breakout", BREAKOUT)
    assert 1.8 < last100.min() / row["reference"] < 2  # "nearly twice the reading"
    _curve_says(row, 0.8e6, {})
    steps, iqm = iqm_curve(row)
    assert abs(steps[np.argmax(iqm >= 20)] - 3.7e6) < 0.1e6
    assert "crosses 10 at about 0.8M env steps and 20 at about 3.7M" in FLAT


def test_the_space_invaders_row():
    row, last100 = _quoted_row("SpaceInvaders", SPACE_INVADERS)
    assert round(last100.min() / row["reference"], 1) == 2.4
    _curve_says(row, 0.7e6, {2e6: 83, 3e6: 91, 4e6: 98})
    assert "crosses 43 at about 0.7M env steps and is still rising at 5M (about 83 at 2M, 91 at 3M, 98 at 4M)" in FLAT


def test_the_asterix_row():
    row, last100 = _quoted_row("Asterix", ASTERIX)
    assert 2 < last100.min() / row["reference"] < 2.1  # "about twice the reading"
    _curve_says(row, 1.3e6, {2e6: 26, 3e6: 32, 4e6: 34})
    assert "crosses 17 at about 1.3M env steps and is still rising at 5M (about 26 at 2M, 32 at 3M, 34 at 4M)" in FLAT


FREEWAY = HERE / "progress/20261205-033230-pqn-gymnax-Freeway-MinAtar-1b6c8d"


def test_the_freeway_row():
    row, last100 = _quoted_row("Freeway", FREEWAY)
    assert round(last100.min() / row["reference"], 1) == 1.2
    _curve_says(row, 1.3e6, {2e6: 55, 4e6: 59})
    assert "crosses 50 at about 1.3M env steps and is still rising at 5M (about 55 at 2M, 59 at 4M)" in FLAT


def _pqn_rows() -> list[dict]:
    """The report's PQN rows (the suite's A2C rows are measured against another reading)."""
    return [e for e in json.loads((HERE / "results.json").read_text())["entries"]
            if e["entry"].startswith("pqn-sticky/")]


def gymnax_rows() -> list[str]:
    """The notes' comparison table, made again from both suites' results: each game run in
    the paper's env beside its row in gymnax's setting."""
    rows = []
    for sticky in _pqn_rows():
        if sticky["status"] != "finished":
            continue
        plain = entry(ROOT / "benchmarks/minatar-cpu/results.json",
                      sticky["entry"].replace("pqn-sticky/", "pqn/"))
        a, b = np.asarray(plain["per_seed"]), np.asarray(sticky["per_seed"])
        _, p = stats.welch_t_test(a, b)
        game = sticky["env"].split(":")[1].removesuffix("-MinAtar")
        rows.append(f"| {game} | {a.mean():.1f} | {b.mean():.1f} | {a.mean() - b.mean():.1f} "
                    f"({(a.mean() - b.mean()) / a.mean():.0%}) | {p:.2g} | {sticky['reference']:g} |")
    return rows


def test_the_comparison_with_gymnax_setting():
    rows = gymnax_rows()
    text = (HERE / "NOTES.md").read_text()
    table = text[text.index("| game | gymnax's setting"):].split("\n\n")[0].splitlines()[2:]
    assert table == rows and len(rows) == 4
    diffs = [float(r.split(" | ")[3].split()[0]) for r in rows]
    assert all(d > 0 for d in diffs[:3]) and diffs[3] < 0  # three lower, Freeway higher
    assert f"Freeway goes the other way: {-diffs[3]:.1f} higher" in FLAT
    assert float(rows[3].split(" | ")[4]) < 1e-3
    assert "Breakout's 8 seeds a side do not settle it" in FLAT and float(rows[0].split(" | ")[4]) > 0.05
    assert "every seed of Breakout, SpaceInvaders and Asterix is still at least 1.8 times it" in FLAT
    for game in ("Breakout", "SpaceInvaders", "Asterix"):
        row = entry(HERE / "results.json", f"pqn-sticky/gymnax:{game}-MinAtar")
        assert min(row["per_seed"]) >= 1.8 * row["reference"]
    assert all(e["verdict"].startswith("above") for e in _pqn_rows())


A2C_BREAKOUT = HERE / "progress/20261206-100009-a2c-gymnax-Breakout-MinAtar-dddea2"
A2C_SPACE_INVADERS = HERE / "progress/20261206-102201-a2c-gymnax-SpaceInvaders-MinAtar-37298c"
A2C_ASTERIX = HERE / "progress/20261206-105820-a2c-gymnax-Asterix-MinAtar-d78a24"
A2C_FREEWAY = HERE / "progress/20261206-112341-a2c-gymnax-Freeway-MinAtar-c84b83"


def _metrics(run: Path) -> pd.DataFrame:
    return pd.concat(pd.read_parquet(f) for f in sorted((run / "metrics").glob("*.parquet")))


def _late_entropy(frame: pd.DataFrame) -> pd.Series:
    """Each seed's policy entropy averaged over the run's last 100 updates."""
    late = frame[frame["update"] >= frame["update"].max() - 99]
    return late.groupby("seed")["entropy"].mean()


def test_the_a2c_breakout_row():
    """Below the reading on every seed, flat from 1M, its policy not collapsed; the update
    counts the notes set beside AC(lambda)'s one a frame."""
    row, last100 = _quoted_row("Breakout", A2C_BREAKOUT, "a2c")
    assert round(last100.max() / row["reference"], 2) == 0.36  # "about a third of the reading"
    assert f"({row['seeds_below']} of 8 under the reference, signed-rank p" in FLAT
    _curve_never_reaches(row, {1e6: 4.9, 2e6: 5.3, 4e6: 5.5, 5e6: 5.5})
    assert "rises to 4.9 by 1M env steps and then stays: 5.3 at 2M, 5.5 at 4M and at 5M" in FLAT
    frame = _metrics(A2C_BREAKOUT)
    updates = int(frame["update"].max()) + 1
    config = json.loads((A2C_BREAKOUT / "run.json").read_text())["config"]
    assert updates == 5_000_000 // (config["num_envs"] * config["num_steps"]) == 15_625
    assert (config["torso"], config["activation"], config["optimizer"]) == (
        "minatar_cnn", "relu", "rmsprop")
    assert f"5M / (64 x 5) = {updates:,} updates of a 320-frame batch: 320 times fewer" in FLAT
    late = _late_entropy(frame)
    assert "1.79 for 6 uniform actions" in FLAT and round(np.log(6), 2) == 1.79
    assert f"{late.min():.2f} to {late.max():.2f} a seed" in FLAT
    _pqn_beside("Breakout", " (above)")


def _pqn_beside(game: str, after: str) -> None:
    """The notes set PQN's row in the same env beside an A2C row: its mean, then ``after``."""
    pqn = entry(HERE / "results.json", f"pqn-sticky/gymnax:{game}-MinAtar")
    assert f"PQN in the same env reaches {pqn['mean']:.1f}{after}" in FLAT


def _curve_never_reaches(row: dict, levels: dict[float, float]) -> None:
    """The IQM curve stays under the reference and reads ``levels`` ({env steps: IQM to one
    decimal}) where the notes say."""
    steps, iqm = iqm_curve(row)
    assert iqm.max() < row["reference"]
    for at, level in levels.items():
        assert round(iqm[np.argmin(abs(steps - at))], 1) == level


def test_the_a2c_probe_with_four_times_the_updates():
    """The 16-env probe's record: only num_envs changed, its figures as the notes quote them."""
    meta = json.loads((HERE / "probes/a2c-16envs-breakout-1M.json").read_text())
    row = json.loads((A2C_BREAKOUT / "run.json").read_text())
    changed = {k for k in row["config"] if row["config"][k] != meta["config"][k]}
    assert changed == {"num_envs", "total_steps"} and meta["config"]["num_envs"] == 16
    assert meta["group"]["spec"]["env_kwargs"] == row["group"]["spec"]["env_kwargs"]
    assert meta["total_steps_per_seed"] == 1_000_000 and meta["seeds"] == 8
    last100 = np.asarray(meta["train_return_last100"])
    updates = 1_000_000 // (16 * meta["config"]["num_steps"])
    assert f"{updates:,} by 1M env steps against the row's {updates // 4:,}" in FLAT
    assert (f"is {last100.mean():.1f} (IQM {stats.iqm(last100):.1f}, per seed "
            f"{last100.min():.1f} to {last100.max():.1f}), against the row's IQM of 4.9 at "
            "1M") in FLAT


def test_the_a2c_space_invaders_row():
    """Below on every seed, its curve still rising at 5M; entropy and PQN's row as quoted."""
    row, last100 = _quoted_row("SpaceInvaders", A2C_SPACE_INVADERS, "a2c")
    assert last100.max() / row["reference"] < 1 / 3  # "under a third of the reading"
    _curve_never_reaches(row, {1e6: 19.7, 2e6: 30.9, 3e6: 38.8, 4e6: 42.1, 5e6: 47.1})
    assert "19.7 at 1M, 30.9 at 2M, 38.8 at 3M, 42.1 at 4M, 47.1 at 5M" in FLAT
    late = _late_entropy(_metrics(A2C_SPACE_INVADERS))
    assert f"Entropy over the last 100 updates is {late.min():.2f} to {late.max():.2f}" in FLAT
    _pqn_beside("SpaceInvaders", " (above its DQN bar")


def test_the_a2c_asterix_row():
    """Below on every seed, flat for 2M env steps, its policy near uniform at the end."""
    row, last100 = _quoted_row("Asterix", A2C_ASTERIX, "a2c")
    assert round(last100.max() / row["reference"], 1) == 0.2  # "a fifth of the reading"
    _curve_never_reaches(row, {0.5e6: 0.5, 1e6: 0.5, 2e6: 0.7, 3e6: 1.1, 4e6: 2.0, 5e6: 2.4})
    assert ("(0.5 at 0.5M and at 1M, 0.7 at 2M) and only then rises (1.1 at 3M, 2.0 at 4M, 2.4 "
            "at 5M)") in FLAT
    late = _late_entropy(_metrics(A2C_ASTERIX))
    assert f"last 100 updates is {late.min():.2f} to {late.max():.2f} a seed, of 1.79" in FLAT
    _pqn_beside("Asterix", ".")


def test_the_a2c_freeway_row():
    """Below on every seed, its policy uniform from the first update to the last."""
    row, _ = _quoted_row("Freeway", A2C_FREEWAY, "a2c")
    _curve_never_reaches(row, {0.5e6: 0.2, 1e6: 0.2, 5e6: 0.2})
    assert "the IQM curve is 0.2 from 0.5M env steps to 5M" in FLAT
    frame = _metrics(A2C_FREEWAY)
    assert frame["episode_return_max"].max() == 4
    assert "no training episode scores more than 4" in FLAT
    lowest = frame.groupby("seed")["entropy"].min()
    assert f"its entropy is at least {np.floor(lowest.min() * 100) / 100:.2f} a seed" in FLAT
    late = _late_entropy(frame)
    assert round(late.min(), 2) == round(late.max(), 2) == round(np.log(6), 2) == 1.79
    _pqn_beside("Freeway", ".")
    progress = json.loads((HERE / "progress/progress.json").read_text())
    (saved,) = [r for r in progress["runs"] if r["run_id"] == A2C_FREEWAY.name]
    assert saved["status"] == "finished"


def test_the_four_a2c_rows_read_together():
    """Three rows 3 to 8 times under the reading, Freeway's hundreds of times."""
    ratios = [entry(HERE / "results.json", f"a2c-sticky/gymnax:{g}-MinAtar") for g in
              ("Breakout", "SpaceInvaders", "Asterix", "Freeway")]
    assert [round(r["reference"] / r["mean"]) for r in ratios[:3]] == [3, 4, 8]
    assert ratios[3]["reference"] / ratios[3]["mean"] > 100
    assert "by 3 to 8 times on Breakout, SpaceInvaders and Asterix" in FLAT
    assert "on Freeway it does not learn at all" in FLAT


PROBES = HERE / "probes/a2c-breakout-1M-settings.json"
PPO = "PPO, its MinAtar defaults"
PPO_AS_A2C = "PPO's code run as A2C: 5-step rollouts, one pass, Adam 7e-4"
FOUR_PASSES = "the same, four clipped passes over each rollout"
# PPO's other settings, each added alone to the four-pass run: label -> what changed
PPO_SETTINGS = {
    "four passes, normalized advantages": {"normalize_advantages": True},
    "four passes, GAE(0.95)": {"gae_lambda": 0.95},
    "four passes, 128-step rollouts in 8 minibatches": {"num_steps": 128, "num_minibatches": 8},
    "four passes, 128-step rollouts in one batch": {"num_steps": 128},
}
#: The probes in the file's order: the setting each changes, and its label in the notes' table.
PROBE_SETTINGS = [
    ({}, "defaults (RMSProp, TF1's epsilon, 7e-4)"),
    ({"learning_rate": 0.0028}, "learning rate 2.8e-3 (x4)"),
    ({"learning_rate": 0.000175}, "learning rate 1.75e-4 (/4)"),
    ({"optimizer": "adam"}, "Adam, 7e-4"),
    ({"optimizer": "adam", "learning_rate": 0.00025}, "Adam, 2.5e-4"),
    ({"rmsprop_style": "pytorch"}, "RMSProp, PyTorch's epsilon"),
    ({"normalize_obs": False}, "raw observations (not standardized)"),
    ({"ent_coef": 0.0}, "entropy weight 0"),
    ({"ent_coef": 0.05}, "entropy weight 0.05"),
    ({"shared_network": True}, "one network for policy and value"),
    ({"normalize_advantages": True}, "normalized advantages"),
    ({"num_steps": 20}, "20-step rollouts"),
    ({"num_steps": 20, "rmsprop_style": "pytorch"}, "20-step rollouts, PyTorch's epsilon"),
]


A2C_LABELS = {label for _, label in PROBE_SETTINGS}  # the probes of A2C itself


def _probes() -> dict[str, dict]:
    """The probe file's rows by their notes label, in the file's order."""
    rows = json.loads(PROBES.read_text())["rows"]
    labels = [label for _, label in PROBE_SETTINGS] + [PPO, PPO_AS_A2C, FOUR_PASSES,
                                                        *PPO_SETTINGS]
    assert len(rows) == len(labels)
    return dict(zip(labels, rows))


def test_each_a2c_probe_changes_one_setting_of_the_breakout_row():
    """The baseline is the Breakout row's config at 1M; every other A2C probe changes only
    what its label says; all run 8 seeds for 1M env steps in the paper's env."""
    probes = _probes()
    row = json.loads((A2C_BREAKOUT / "run.json").read_text())
    base = probes[PROBE_SETTINGS[0][1]]
    assert base["algo"] == "a2c" and base["changed"] == {}
    assert base["env_kwargs"] == row["group"]["spec"]["env_kwargs"]
    differ = {k for k in row["config"] if row["config"][k] != base["config"][k]}
    assert differ == {"total_steps"}
    assert (base["config"]["optimizer"], base["config"]["rmsprop_style"]) == ("rmsprop",
                                                                            "tensorflow")
    for changed, label in PROBE_SETTINGS:
        probe = probes[label]
        assert probe["changed"] == changed, label
        assert probe["seeds"] == 8 and abs(probe["total_steps_per_seed"] - 1e6) < 2_000
        assert probe["env_kwargs"] == base["env_kwargs"] and probe["env"] == base["env"]
    ppo = probes[PPO]
    assert ppo["changed"]["algo"] == "ppo" and ppo["env_kwargs"] == base["env_kwargs"]
    as_a2c = probes[PPO_AS_A2C]["config"]
    a2c_update = {"num_steps": 5, "update_epochs": 1, "num_minibatches": 1, "gae_lambda": 1.0,
                  "normalize_advantages": False, "vf_coef": 1.0, "learning_rate": 7e-4,
                  "clip_value_loss": False}
    assert {k: as_a2c[k] for k in a2c_update} == a2c_update
    assert {k: as_a2c[k] for k in ("num_envs", "ent_coef", "max_grad_norm", "adam_eps",
                                   "normalize_obs", "torso", "anneal_lr")} == {
        k: base["config"][k] for k in ("num_envs", "ent_coef", "max_grad_norm", "adam_eps",
                                       "normalize_obs", "torso", "anneal_lr")}
    assert probes["20-step rollouts"]["updates"] == 780
    assert "a quarter of the updates (780 by 1M)" in FLAT


def test_the_probe_table_is_the_probe_file():
    for label, probe in _probes().items():
        last100 = np.asarray(probe["train_return_last100"])
        entropy = np.asarray(probe["entropy_last100"])
        assert (f"| {label} | {probe['mean']:.2f} ({probe['iqm']:.2f}) | {last100.min():.1f} to "
                f"{last100.max():.1f} | {entropy.min():.2f} to {entropy.max():.2f} |") in FLAT
        assert probe["mean"] == last100.mean() and probe["iqm"] == stats.iqm(last100)


def _at(probe: dict, steps: float) -> float:
    curve = probe["curve"]
    return curve["iqm"][int(np.argmin(abs(np.asarray(curve["env_steps"]) - steps)))]


def test_what_the_a2c_probes_say():
    """Bigger steps learn faster, the entropy weight and network sharing do nothing, no A2C
    probe passes about 6, and PPO in the same env does."""
    p = {label: probe["mean"] for label, probe in _probes().items()}
    probes = _probes()
    faster = [p["learning rate 2.8e-3 (x4)"], p["Adam, 7e-4"], p["RMSProp, PyTorch's epsilon"]]
    assert round(p["defaults (RMSProp, TF1's epsilon, 7e-4)"], 1) == 3.5
    assert f"from 3.5 to {min(faster):.1f}-{max(faster):.1f}" in FLAT
    slower = [p["learning rate 1.75e-4 (/4)"], p["raw observations (not standardized)"]]
    assert all(round(v) == 1 for v in slower) and "drop it to about 1" in FLAT
    assert round(p["20-step rollouts"], 1) == 0.5
    assert round(float(np.max(probes["20-step rollouts"]["entropy_last100"])), 2) == 1.79
    best = p["20-step rollouts, PyTorch's epsilon"]
    assert best == max(v for k, v in p.items() if k in A2C_LABELS)
    assert f"With PyTorch's it reaches {best:.1f}, the best A2C probe" in FLAT
    assert round(p["entropy weight 0"], 1) == round(p["entropy weight 0.05"], 1) == 3.6
    assert round(p["one network for policy and value"], 1) == 3.7
    assert round(p["normalized advantages"], 1) == 4.5
    assert all(v < 6.5 for k, v in p.items() if k in A2C_LABELS | {PPO_AS_A2C})
    torch, adam = probes["RMSProp, PyTorch's epsilon"], probes["Adam, 7e-4"]
    assert [round(_at(torch, s), 1) for s in (0.3e6, 1e6)] == [5.8, 6.0]
    assert [round(_at(adam, s), 1) for s in (0.3e6, 1e6)] == [5.5, 5.6]
    assert ("PyTorch's convention reads 5.8 at 0.3M and 6.0 at 1M, and Adam reads 5.5 and "
            "5.6") in FLAT
    ppo = probes[PPO]
    entropy = np.asarray(ppo["entropy_last100"])
    assert (f"reaches {ppo['mean']:.1f} and is still rising (IQM {_at(ppo, 0.4e6):.1f} at 0.4M, "
            f"{_at(ppo, 1e6):.1f} at 1M). Its entropy is about A2C's ({entropy.min():.2f} to "
            f"{entropy.max():.2f})") in FLAT
    assert (f"ends at {p[PPO_AS_A2C]:.1f}, level with A2C under Adam "
            f"({p['Adam, 7e-4']:.1f})") in FLAT
    assert abs(p[PPO_AS_A2C] - p["Adam, 7e-4"]) < 0.5 < p[PPO] - p[PPO_AS_A2C]
    four = probes[FOUR_PASSES]
    assert {k: v for k, v in four["config"].items() if probes[PPO_AS_A2C]["config"][k] != v} == {
        "update_epochs": 4}
    seeds = np.asarray(four["train_return_last100"])
    assert (f"ends at {four['mean']:.1f} (per seed {seeds.min():.1f} to {seeds.max():.1f}), above "
            "every A2C probe") in FLAT
    assert four["mean"] > max(v for k, v in p.items() if k in A2C_LABELS)


def _mann_whitney(a: dict, b: dict) -> float:
    """Two-sided Mann-Whitney p of two probes' per-seed returns."""
    return float(mannwhitneyu(a["train_return_last100"], b["train_return_last100"]).pvalue)


def _gradient_steps(probe: dict) -> int:
    config = probe["config"]
    return probe["updates"] * config["update_epochs"] * config["num_minibatches"]


def test_the_rest_of_ppos_lead_is_the_rollouts_shape():
    """Each of PPO's other settings added alone to the four-pass run, as the notes read them:
    long rollouts in minibatches reach PPO, in one batch they do not, GAE(0.95) is not told
    apart and normalized advantages fall below with the entropy."""
    probes = _probes()
    four, ppo = probes[FOUR_PASSES], probes[PPO]
    for label, changed in PPO_SETTINGS.items():
        differ = {k: v for k, v in probes[label]["config"].items() if four["config"][k] != v}
        assert differ == changed, label
    minibatches = probes["four passes, 128-step rollouts in 8 minibatches"]
    assert (_mann_whitney(minibatches, four) < 0.05 < _mann_whitney(minibatches, ppo)
            and minibatches["mean"] > ppo["mean"])
    assert (f"end at {minibatches['mean']:.1f} (IQM {minibatches['iqm']:.1f}), above the "
            f"four-pass run (p {_mann_whitney(minibatches, four):.3f}) and level with PPO's "
            f"defaults ({ppo['mean']:.1f}, p {_mann_whitney(minibatches, ppo):.2f}), with a third "
            f"of its gradient steps ({_gradient_steps(minibatches):,} against "
            f"{_gradient_steps(four):,})") in FLAT
    one_batch = probes["four passes, 128-step rollouts in one batch"]
    assert _mann_whitney(one_batch, four) < 0.05 and round(one_batch["mean"]) == 6
    assert (f"({_gradient_steps(one_batch)} gradient steps) end at {one_batch['mean']:.1f}, back "
            "at A2C's plateau") in FLAT
    gae = probes["four passes, GAE(0.95)"]
    assert _mann_whitney(gae, four) > 0.05
    assert (f"ends at {gae['mean']:.1f}, not told apart from the four-pass run "
            f"(p {_mann_whitney(gae, four):.2f})") in FLAT
    normalized = probes["four passes, normalized advantages"]
    assert _mann_whitney(normalized, four) < 0.05 and normalized["mean"] < four["mean"]
    theirs, ours = (np.asarray(x["entropy_last100"]) for x in (normalized, four))
    assert theirs.max() < ours.min()
    assert (f"end at {normalized['mean']:.1f}, below it (p {_mann_whitney(normalized, four):.3f})"
            f": over 320-sample rollouts the standardized advantages collapse the policy's "
            f"entropy to {theirs.min():.2f} to {theirs.max():.2f} by the end, against "
            f"{ours.min():.2f} to {ours.max():.2f} without them") in FLAT
    assert four["config"]["num_envs"] * four["config"]["num_steps"] == 320
