"""The Navix notes' figures are the committed report's and study's (benchmarks/navix-cpu)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.experiments.reports import flat_notes, report_row
from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "navix-cpu"


def per_seed(entry: str) -> np.ndarray:
    return np.asarray(report_row(ROOT, entry)["per_seed"], dtype=float)


def test_the_ppo_figures_the_notes_quote():
    assert (per_seed("ppo/navix:Navix-DoorKey-8x8-v0") == 0).all()
    assert (per_seed("ppo/navix:Navix-DoorKey-16x16-v0") == 0).all()
    crossing = per_seed("ppo/navix:Navix-SimpleCrossingS9N1-v0")
    assert round(crossing.mean(), 2) == 0.96 and (crossing == 1).sum() == 6
    assert round(per_seed("ppo/navix:Navix-Dynamic-Obstacles-6x6-Random-v0").mean(), 2) == 0.56
    empty = per_seed("ppo/navix:Navix-Empty-16x16-v0")
    assert (empty == 1).sum() == 2 and (empty == 0).sum() == 6
    assert round(per_seed("ppo/navix:Navix-FourRooms-v0").mean(), 3) == 0.075


def test_the_doorkey_study_figures_the_notes_quote():
    study = json.loads((ROOT / "doorkey_study.json").read_text())["results"]
    bug_1m = [s["final_eval_return"] for s in study["walls_passable@1M"]["per_seed"]]
    assert np.allclose(bug_1m, [1.0, 1.0, 0.95, 0.95])
    random = study["random_policy"]["policies"]["uniform"]["success_rate"]
    random_bug = study["random_policy_walls_passable"]["policies"]["uniform"]["success_rate"]
    assert round(100 * random, 2) == 0.05 and round(100 * random_bug, 1) == 2.2
    for variant in ("baseline", "no_grad_clip", "no_bootstrap", "rejax_init", "policy_gain1",
                    "no_prepared_starts", "ent0", "rejax_like"):
        assert all(s["final_eval_return"] == 0 for s in study[variant]["per_seed"]), variant


def test_the_q_learner_figures_the_notes_quote():
    assert (per_seed("dqn/navix:Navix-DoorKey-8x8-v0") == 0).all()
    dqn_lava = per_seed("dqn/navix:Navix-LavaGapS6-v0")  # since normalize_obs
    assert (dqn_lava == 0).sum() == 7 and np.isclose(dqn_lava.max(), 0.1)
    assert round(dqn_lava.mean(), 2) == 0.01
    assert (per_seed("pqn/navix:Navix-DoorKey-8x8-v0") == 0).all()
    pqn_lava = per_seed("pqn/navix:Navix-LavaGapS6-v0")  # since normalize_obs and ReLU
    assert round(pqn_lava.mean(), 2) == 0.79 and (pqn_lava >= 0.6).sum() == 7
    assert np.allclose(pqn_lava, [0.95, 0.95, 0.85, 0.60, 0.75, 0.80, 1.00, 0.45])
    row = report_row(ROOT, "pqn/navix:Navix-LavaGapS6-v0")
    assert row["mean_ci_high"] < 0.96 and round(row["mean_ci_high"], 1) == 0.9
    before = json.loads((ROOT / "q_eval_epsilon.json").read_text())[
        "pqn/navix:Navix-LavaGapS6-v0"]["suite_measure_final_eval_per_seed"]
    assert np.allclose(before, [0.10, 0.0, 0.0, 0.40, 0.0, 0.0, 0.05, 0.25])  # SiLU, raw obs


def test_the_q_config_study_figures_the_notes_quote():
    study = json.loads((ROOT / "q_config_study.json").read_text())
    returns = lambda variant: np.asarray([s["final_eval_return"] for s in study[
        f"pqn/navix:Navix-LavaGapS6-v0/{variant}"]["per_seed"]])
    assert round(returns("relu").mean(), 2) == 0.23
    assert round(returns("relu_obsnorm").mean(), 2) == 0.89
    running = returns("relu_normalize_obs")
    assert round(running.mean(), 2) == 0.79 and (running >= 0.5).sum() == 7
    assert np.allclose(running, [0.95, 0.95, 0.85, 0.60, 0.75, 0.80, 1.00, 0.45])


def _peer(key: str) -> dict:
    return json.loads((ROOT / "rejax_peer.json").read_text())[key]


def _p(a, b) -> float:
    """Mann-Whitney's two-sided p of two sets of evaluation returns, each read to 4 decimals (the
    files hold some as float32, 0.949999988 for 0.95, which would break the ties)."""
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(np.round(a, 4), np.round(b, 4), alternative="two-sided").pvalue)


def _seeds(values) -> str:
    return ", ".join(str(round(float(v), 2)) for v in values)


def test_rejax_itself_on_this_navix_the_figures_the_notes_quote():
    """rejax's PQN and DQN at the table's pin, on jaxrl's Navix (rejax_peer.json), beside
    jaxrl's entries (results.json) and the table's seeds (navix_rejax_configs.json)."""
    flat = flat_notes(ROOT)
    table = {(f["algo"], f["task"]): f["final_return_per_seed"] for f in json.loads(
        (ROOT.parents[1] / "experiments/benchmarks/navix_rejax_configs.json").read_text()
    )["result_files"] if f["matches_table"] and f["num_seeds"] == 5}  # the table's own runs
    for algo, words, digits in (("pqn", "rejax's scores", 3), ("dqn", "rejax's DQN scores", 2)):
        peer = _peer(f"{algo}/LavaGapS6")
        assert peer["versions"]["Navix"] == "0.7.4" and peer["rejax_commit"] == "613bd7a"
        assert peer["seeds"] == 8 and peer["eval_steps"][-1] >= 1_048_576  # its last evaluation
        ours = per_seed(f"{algo}/navix:Navix-LavaGapS6-v0")
        seeds = peer["final_return_per_seed"]
        assert f"{words} {peer['final_mean']:.{digits}f} (per seed {_seeds(seeds)}" in flat
        theirs = table[(algo, "LavaGapS6")]
        assert len(theirs) == 5
        p_ours, p_table = _p(seeds, ours), _p(seeds, theirs)
        if algo == "pqn":
            assert (f"where jaxrl's entry scores {ours.mean():.2f} (Mann-Whitney p "
                    f"{p_ours:.2f}, two-sided") in flat
            assert f"from the table's 5 (p {p_table:.2f})" in flat and p_table > 0.05
        else:
            assert sum(v > 0 for v in seeds) == 6 and "6 of 8 seeds find the goal" in flat
            assert f"above jaxrl's entry's {ours.mean():.2f} (p {p_ours:.3f})" in flat
            assert p_ours < 0.05 < p_table
            assert f"from the table's {np.mean(theirs):.2f} (p {p_table:.2f})" in flat
            curve = dict(zip(peer["eval_steps"], peer["mean_return_per_point"]))
            assert max(v for k, v in curve.items() if k <= 262_160) == 0.0
            assert (f"0.0125 at 393,240, {curve[786_480]:g} at 786,480, "
                    f"{round(curve[917_560], 2):g} at 917,560") in flat


def test_the_dqn_variants_against_rejax_the_figures_the_notes_quote():
    flat = flat_notes(ROOT)
    study = json.loads((ROOT / "q_config_study.json").read_text())
    entry = per_seed("dqn/navix:Navix-LavaGapS6-v0")
    rejax = _peer("dqn/LavaGapS6")["final_return_per_seed"]

    def returns(variant):
        record = study[f"dqn/navix:Navix-LavaGapS6-v0/{variant}"]
        assert record["config"]["normalize_obs"] and record["seeds"] == 8
        assert record["total_steps"] == 1_048_576
        return np.asarray([s["final_eval_return"] for s in record["per_seed"]])

    like = returns("dqn_rejax_like")
    assert (f"DQN scores **{like.mean():.2f}** (per seed {_seeds(like)}: "
            f"{(like > 0).sum()} of 8 find the goal), above the entry (p {_p(like, entry):.4f}) "
            f"and not told apart from rejax's own {np.mean(rejax):.2f} (p "
            f"{_p(like, rejax):.3f})") in flat
    assert _p(like, entry) < 0.05 < _p(like, rejax)
    unclipped = returns("obs_noclip")
    assert (f"observations not clipped, {unclipped.mean():.4f} ({(unclipped > 0).sum()} of 8 "
            f"find the goal; against the entry p {_p(unclipped, entry):.2f})") in flat


def test_the_network_is_dqns_difference_from_rejax():
    """rejax's network alone closes DQN's gap to rejax's own on this Navix; gradient clipping
    and time limits, on the entry as it now is, do not."""
    flat = flat_notes(ROOT)
    study = json.loads((ROOT / "q_config_study.json").read_text())
    returns = lambda variant: np.asarray([s["final_eval_return"] for s in study[
        f"dqn/navix:Navix-LavaGapS6-v0/{variant}"]["per_seed"]])
    entry = per_seed("dqn/navix:Navix-LavaGapS6-v0")
    rejax = _peer("dqn/LavaGapS6")["final_return_per_seed"]
    net, like = returns("rejax_net"), returns("dqn_rejax_like")
    assert (f"**{net.mean():.2f}** (per seed {_seeds(net)}: {(net > 0).sum()} of 8 find the "
            f"goal; against the entry p {_p(net, entry):.3f}, against rejax's own p "
            f"{_p(net, rejax):.2f}, against all of them at once p {_p(net, like):.2f})") in flat
    assert _p(net, entry) < 0.05 < min(_p(net, rejax), _p(net, like))
    grad = returns("grad_noclip_termination")
    assert (f"(`grad_noclip_termination`), {grad.mean():.3f} ({(grad > 0).sum()} of 8; against "
            f"the entry p {_p(grad, entry):.1f})") in flat
    august = [f for f in json.loads((ROOT.parents[1] / "experiments/benchmarks/"
                                     "navix_rejax_configs.json").read_text())["result_files"]
              if f["algo"] == "dqn" and f["task"] == "LavaGapS6" and "results.bkp.2/" in f["path"]]
    assert len(august) == 1 and august[0]["config_equals_yaml_at_250d46e9"]
    assert f"(the authors' August run: {august[0]['final_mean']:.2f})" in flat
    assert (f"same config (August 2025, `results.bkp.2/`) scored "
            f"{august[0]['final_mean']:.2f}") in flat
    (pqn,) = [f for f in json.loads((ROOT.parents[1] / "experiments/benchmarks/"
                                     "navix_rejax_configs.json").read_text())["result_files"]
              if f["algo"] == "pqn" and f["task"] == "LavaGapS6" and f["num_seeds"] == 5
              and "results.additional/" in f["path"]]
    assert pqn["config_equals_yaml_at_250d46e9"]
    assert (f"same config (August 2025, `results.additional/`, 5 seeds) scored "
            f"{pqn['final_mean']:.2f}") in flat


IQN_DOORKEY = ROOT / "superseded" / "20261202-172724-iqn-navix-Navix-DoorKey-8x8-v0-f3bc44"


IQN_DOORKEY_ONLINE = ROOT / "progress" / "20261204-010650-iqn-navix-Navix-DoorKey-8x8-v0-3d6836"


def _iqn_chunks(run: Path = IQN_DOORKEY) -> list[pd.DataFrame]:
    """An IQN run's committed chunk metrics, in order (the set-aside DoorKey-8x8 run's unless
    told)."""
    return [pd.read_parquet(f) for f in sorted((run / "metrics").glob("chunk-*.parquet"))]


def _online_targets_entry(run: Path, entry: str, value: float, flat: str
                          ) -> tuple[dict, list[pd.DataFrame]]:
    """Checks that the report's ``entry`` row is IQN run ``run`` with rejax's online targets,
    finished at ``value`` on every seed, and that the notes (``flat``) quote its training
    seconds, rate, wall time and median chunk rate; returns its record and chunk metrics."""
    meta = json.loads((run / "run.json").read_text())
    config = meta["group"]["spec"]["configs"][0]
    assert meta["status"] == "finished" and meta["final_eval_return"] == [value] * 8
    assert config["tau"] == 1.0 and config["target_update_period"] == 1
    row = report_row(ROOT, entry)
    assert row["run_id"] == run.name and row["per_seed"] == [value] * 8
    assert f"with rejax's online targets: {value} on every seed" in flat
    wall = (pd.Timestamp(meta["ended_at"]) - pd.Timestamp(meta["started_at"])).total_seconds()
    assert (f"{meta['run_seconds']:,.0f} s of training ({meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, its record's figure)") in flat
    assert f"({wall:,.0f} s of wall)" in flat
    chunks = _iqn_chunks(run)
    rate = float(np.median([c["env_steps_per_second"].median() for c in chunks[1:]]))
    assert (f"its chunks 2 to {len(chunks)} ran at a median of {rate:,.0f} env-steps/s over 8 "
            "seeds") in flat
    return meta, chunks


def test_the_iqn_doorkey_entry_with_online_targets_the_figures_the_notes_quote():
    """The report's IQN DoorKey-8x8 row is the online-targets run, 0 on every seed; its cost
    and the training episodes that reached the goal (any episode of a logged interval, by
    ``episode_return_max``), from the run's record and committed metrics."""
    flat = flat_notes(ROOT)
    meta, chunks = _online_targets_entry(IQN_DOORKEY_ONLINE, "iqn/navix:Navix-DoorKey-8x8-v0",
                                         0.0, flat)
    config = meta["group"]["spec"]["configs"][0]
    rows = pd.concat(chunks)
    won = rows[rows["episode_return_max"] > 0]
    early, late = won[won["env_steps"] < 77_000], won[won["epsilon"] <= 0.01]
    assert len(early) + len(late) == len(won)
    missing = sorted(set(range(8)) - set(late["seed"]))
    assert (f"reached the goal in {len(won)} of the run's {len(rows):,} logged intervals: "
            f"{len(early)} before 77,000 env steps a seed (epsilon still "
            f"{early['epsilon'].min():.2f} or more) and {len(late)} at the final epsilon of 0.01 "
            f"(every seed but seed {missing[0]}, the last at {late['env_steps'].max():,.0f} env "
            "steps)") in flat and len(missing) == 1
    assert (f"shortest episode {won['episode_length_min'].min():.0f} to "
            f"{won['episode_length_min'].max():.0f} steps") in flat
    last = rows.dropna(subset=["episode_length_mean"]).sort_values("update").groupby("seed").tail(5)
    assert last["seed"].nunique() == 8 and (last["episode_length_mean"] == 100).all()
    study = json.loads((ROOT / "q_eval_epsilon.json").read_text())
    passable = study["iqn/navix:Navix-DoorKey-8x8-v0@walls_passable@first-quarter-online-targets"]
    assert passable["config"]["tau"] == config["tau"]
    walkable = np.mean(passable["mean_return_by_eval_epsilon_per_seed"]["0.0"])
    assert f"the same configuration's first quarter scored {walkable:.2f}" in flat


IQN_LAVAGAP_ONLINE = ROOT / "progress" / "20261204-070941-iqn-navix-Navix-LavaGapS6-v0-39ea01"


def test_the_iqn_lavagap_entry_with_online_targets_the_figures_the_notes_quote():
    """The report's IQN LavaGapS6 row is the online-targets run, 1.0 on every seed (the
    table's 1.0); its cost, its evaluations over training and its last training episodes, from
    the run's record and committed metrics."""
    flat = flat_notes(ROOT)
    meta, _ = _online_targets_entry(IQN_LAVAGAP_ONLINE, "iqn/navix:Navix-LavaGapS6-v0",
                                    1.0, flat)
    assert "online targets: 1.0 on every seed** (IQM 1.0)" in flat
    times = {1: "once", 2: "twice"}[len(meta["resumed"])]
    assert "resumed " + times + " from the committed progress folder" in flat
    batch = meta["group"]["spec"]["configs"][0]["batch_size"]
    doorkey = json.loads((IQN_DOORKEY_ONLINE / "run.json").read_text())
    assert batch == 2 * doorkey["group"]["spec"]["configs"][0]["batch_size"]
    assert f"over 8 seeds: its batch of {batch} is twice DoorKey-8x8's" in flat
    evals = pd.read_parquet(IQN_LAVAGAP_ONLINE / "evaluations.parquet")
    curve = evals.groupby("env_steps")["eval_return"].mean()
    assert (curve.loc[:201_600] == 0).all()
    assert (f"{curve[403_200]:.2f} at 403,200, {curve[504_000]:.2f} at 504,000, "
            f"{curve[604_800]:.2f} at 604,800 and 1.0 on every seed") in flat
    solved = evals[evals["env_steps"] >= 705_600]
    assert (solved["eval_return"] == 1.0).all() and solved["seed"].nunique() == 8
    last100 = meta["train_return_last100"]
    assert f"returned {min(last100):.2f} to {max(last100):.2f} per seed" in flat


def test_the_iqn_entry_on_this_cpu_the_figures_the_notes_quote():
    """IQN DoorKey-8x8's rate alone, its checkpoint's weight and its training returns to
    checkpoint 70, from the run's committed metrics and checkpoint_sizes.json."""
    flat = flat_notes(ROOT)
    chunks = _iqn_chunks()[:70]
    assert len(chunks) == 70
    rate = float(np.median([c["env_steps_per_second"].median() for c in chunks[1:]]))
    assert (f"chunks 2 to 70 ran at a median of {rate:,.0f} env-steps/s over 8 seeds, "
            f"{1_048_576 * 8 / rate / 3600:.1f} hours an entry") in flat
    rows = pd.concat(chunks)
    won = rows[rows["episode_return_mean"] > 0]
    assert int(chunks[-1]["env_steps"].max()) == 470_400 and "(470,400 env steps a seed)" in flat
    assert (f"reached the goal in {len(won)} of its {len(rows):,} logged intervals, all before "
            "77,000 env steps a seed") in flat and won["env_steps"].max() < 77_000
    sizes = json.loads((ROOT / "checkpoint_sizes.json").read_text())["entries"]
    iqn = sizes["iqn/navix:Navix-DoorKey-8x8-v0"]
    assert iqn["run_id"] == IQN_DOORKEY.name and iqn["checkpoint_step"] == 70
    assert f"{iqn['checkpoint_bytes'] / 1e6:.1f} MB on DoorKey-8x8 at 8 seeds" in flat


def test_the_set_aside_iqn_doorkey_run_and_the_tables_walkable_walls():
    """IQN DoorKey-8x8's first run (set aside: trained before IQN's exploring action read
    normalized observations) scored 0 on every seed, and the report no longer counts it; the
    table's run walked through walls (its own result files, read into
    navix_rejax_configs.json and doorkey_study.json); the training episodes that reached the
    goal, counted from the run's committed metrics."""
    flat = flat_notes(ROOT)
    meta = json.loads((IQN_DOORKEY / "run.json").read_text())
    assert meta["status"] == "finished" and meta["final_eval_return"] == [0.0] * 8
    assert meta["config"]["normalize_obs"] is True
    assert report_row(ROOT, "iqn/navix:Navix-DoorKey-8x8-v0")["run_id"] != IQN_DOORKEY.name
    assert not (ROOT / "progress" / IQN_DOORKEY.name).exists()
    wall = (pd.Timestamp(meta["ended_at"]) - pd.Timestamp(meta["started_at"])).total_seconds()
    assert (f"{meta['run_seconds']:,.0f} s of training ({meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds") in flat and f"({wall:,.0f} s of wall)" in flat
    assert "`test_the_exploring_action_reads_the_normalized_observation`" in flat
    configs = Path(__file__).resolve().parents[2] / "experiments" / "benchmarks" / "navix_rejax_configs.json"
    files = {f["path"]: f for f in json.loads(configs.read_text())["result_files"]
             if f["algo"] == "iqn" and f["task"] == "DoorKey-8x8"}
    table = files["baselines/rejax/results/navix_Navix-DoorKey-8x8-v0_iqn_5_0_1760742454.1812055.json"]
    august = files["baselines/rejax/results.additional/navix_Navix-DoorKey-8x8-v0_iqn_5_0_1754041485.1390102.json"]
    assert table["final_return_per_seed"] == [1.0] * 5 and table["matches_table"]
    assert august["final_return_per_seed"] == [0.0] * 5 and august["config_equals_yaml_at_250d46e9"]
    reference = json.loads((ROOT / "doorkey_study.json").read_text())["reference"]
    assert "shortest evaluation episode 11 steps" in reference["iqn_table_run"]
    assert "0.0 on all 5 seeds" in reference["iqn_earlier_run_same_config"]
    rows = pd.concat(_iqn_chunks())
    assert int(rows["env_steps"].max()) == 1_048_320  # the report's steps a seed
    won = rows[rows["episode_return_mean"] > 0]
    early, late = won[won["env_steps"] < 77_000], won[won["env_steps"] > 800_000]
    assert len(early) + len(late) == len(won)
    assert (f"reached the goal in {len(won)} of the run's {len(rows):,} logged intervals: "
            f"{len(early)} before 77,000 env steps a seed (epsilon still "
            f"{early['epsilon'].min():.2f} or more) and {len(late)} after 800,000 (seeds "
            f"{' and '.join(str(s) for s in sorted(set(late['seed'])))}, at the final epsilon of "
            f"{late['epsilon'].max():.2f})") in flat
    assert (f"each by a path of {won['episode_length_min'].min():.0f} to "
            f"{won['episode_length_min'].max():.0f} steps") in flat
    last = rows.dropna(subset=["episode_length_mean"]).sort_values("update").groupby("seed").tail(5)
    assert last["seed"].nunique() == 8 and (last["episode_length_mean"] == 100).all()


def test_the_q_eval_overrides_read_yaml_and_name_an_unknown_key():
    """``navix_q_eval.py --set``: a value is read as YAML; a key the entry lacks stops the
    script with a line naming it, before any training."""
    overrides = load("navix_q_eval")._overrides
    config = {"eps_decay_fraction": 0.1, "hidden": [64, 64]}
    assert overrides(["eps_decay_fraction=0.4", "hidden=[32]"], config) == {
        "eps_decay_fraction": 0.4, "hidden": [32]}
    with pytest.raises(SystemExit, match=r"'eps_decay=0\.4'.*eps_decay_fraction"):
        overrides(["eps_decay=0.4"], config)
    with pytest.raises(SystemExit, match="want KEY=VALUE"):
        overrides(["eps_decay_fraction"], config)


def test_goal_reaching_counts_only_the_intervals_after_epsilons_decay():
    """``navix_q_eval.goal_reached_after_decay``: per seed, the logged intervals from the decay's
    end on, those with an episode at the goal, and the shortest such episode (None: none)."""
    rows = pd.DataFrame({"seed": [0, 0, 0, 1, 1, 1], "env_steps": [50, 100, 150, 50, 100, 150],
                         "episode_return_max": [1.0, 0.0, 0.5, 0.0, 0.0, float("nan")],
                         "episode_length_min": [11, 100, 23, 100, 100, float("nan")]})
    got = load("navix_q_eval").goal_reached_after_decay(rows, 100.0, 2)
    assert got == {"from_env_steps": 100, "intervals_per_seed": [2, 2],
                   "intervals_reaching_goal_per_seed": [1, 0],
                   "shortest_goal_episode_per_seed": [23, None]}


def test_the_iqn_walls_passable_study_before_the_fix_the_figures_the_notes_quote():
    """The bug's evidence: training reached the goal at the final epsilon on seeds 3 and 4
    while every seed's greedy evaluation returned 0 (q_eval_epsilon.json)."""
    flat = flat_notes(ROOT)
    key = "iqn/navix:Navix-DoorKey-8x8-v0@walls_passable@first-quarter@raw-obs-acting-bug"
    record = json.loads((ROOT / "q_eval_epsilon.json").read_text())[key]
    assert record["walls_passable"] and record["overrides"] == ["eps_decay_fraction=0.4"]
    assert record["total_steps"] == 262_144 and record["config"]["normalize_obs"] is True
    for eps in ("0.0", "0.005"):
        assert record["mean_return_by_eval_epsilon_per_seed"][eps] == [0.0] * 8
    goal = record["training_goal_after_decay"]
    hits, shortest = goal["intervals_reaching_goal_per_seed"], goal["shortest_goal_episode_per_seed"]
    top = sorted(range(8), key=lambda s: -hits[s])[:2]
    a, b = sorted(top)
    assert (f"epsilon at 0.01 from {goal['from_env_steps']:,} on): from there, training episodes "
            f"reached the goal in {hits[a]} and {hits[b]} of {goal['intervals_per_seed'][0]} "
            f"logged intervals on seeds {a} and {b} (by paths as short as {shortest[a]} and "
            f"{shortest[b]} steps)") in flat
    assert all(h <= 2 for s, h in enumerate(hits) if s not in top)
    assert f"`{key}`" in flat


def test_the_iqn_walls_passable_study_after_the_fix_the_figures_the_notes_quote():
    """Fixed, IQN's first quarter with walkable walls still reaches the goal on one seed only."""
    flat = flat_notes(ROOT)
    key = "iqn/navix:Navix-DoorKey-8x8-v0@walls_passable@first-quarter"
    record = json.loads((ROOT / "q_eval_epsilon.json").read_text())[key]
    assert record["walls_passable"] and record["overrides"] == ["eps_decay_fraction=0.4"]
    assert record["total_steps"] == 262_144 and record["config"]["normalize_obs"] is True
    by_eps = record["mean_return_by_eval_epsilon_per_seed"]
    assert by_eps["0.0"] == by_eps["0.005"]
    scoring = [s for s, v in enumerate(by_eps["0.0"]) if v > 0]
    assert scoring == [6] and round(by_eps["0.0"][6], 2) == 0.2
    training = record["training_return_last_updates_per_seed"]
    assert [s for s, v in enumerate(training) if v > 0] == [6]
    assert (f"`{key}`, {record['train_seconds']:,.0f} s of training) scores 0.2 on seed 6 and "
            f"0.0 on the other seven, at epsilon 0 and at 0.005 alike, and its last training "
            f"episodes return 0.0 on every seed but seed 6 ({training[6]:.2f})") in flat


def test_the_iqn_walls_passable_study_with_online_targets_the_figures_the_notes_quote():
    """rejax's online targets turn the first quarter with walkable walls into the table's
    shortcut on every seed (q_eval_epsilon.json), and the suite's IQN entries take them."""
    flat = flat_notes(ROOT)
    records = json.loads((ROOT / "q_eval_epsilon.json").read_text())
    key = "iqn/navix:Navix-DoorKey-8x8-v0@walls_passable@first-quarter-online-targets"
    online, slow = records[key], records[key.removesuffix("-online-targets")]
    assert online["config"]["tau"] == 1.0 and online["config"]["target_update_period"] == 1
    assert slow["config"]["tau"] == 0.01 and slow["config"]["target_update_period"] == 51
    by_eps = online["mean_return_by_eval_epsilon_per_seed"]
    assert by_eps["0.0"] == by_eps["0.005"]
    values = np.array(by_eps["0.0"])
    slow_mean = np.mean(slow["mean_return_by_eval_epsilon_per_seed"]["0.0"])
    assert (f"scores {values.mean():.2f} (per seed {', '.join(f'{v:.2f}' for v in values)}) at "
            f"epsilon 0 and at 0.005 alike, against {slow_mean:.2f} with the paper's slow "
            "target") in flat
    goal = online["training_goal_after_decay"]
    hits = goal["intervals_reaching_goal_per_seed"]
    assert (f"reached the goal in {min(hits)} to {max(hits)} of {goal['intervals_per_seed'][0]} "
            "logged intervals on every seed") in flat
    assert set(goal["shortest_goal_episode_per_seed"]) == {11}
    suite = (ROOT.parents[1] / "experiments/benchmarks/navix.yaml").read_text()
    iqn_lines = [line for line in suite.splitlines() if "config:" in line and "kappa" in line]
    assert len(iqn_lines) == 2
    assert all("target_update_period: 1," in line and "tau: 1.0," in line for line in iqn_lines)
