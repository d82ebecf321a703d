"""The Navix notes' figures are the committed report's and study's (benchmarks/navix-cpu)."""

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "navix-cpu"


def per_seed(entry: str) -> np.ndarray:
    results = json.loads((ROOT / "results.json").read_text())
    (found,) = [e for e in results["entries"] if e["entry"] == entry]
    return np.asarray(found["per_seed"], dtype=float)


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
    results = json.loads((ROOT / "results.json").read_text())["entries"]
    (row,) = [e for e in results if e["entry"] == "pqn/navix:Navix-LavaGapS6-v0"]
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
