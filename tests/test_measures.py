"""The per-seed measures references use: the last 100 training episodes from per-update
(mean, count) rows, exact whenever the updates involved are taken whole."""

import numpy as np
import pandas as pd

from jaxrl.measures import last_episodes_mean, per_seed, train_return_last100


def test_last_episodes_mean_by_brute_force():
    rng = np.random.default_rng(0)
    episodes = [rng.normal(size=rng.integers(0, 30)) for _ in range(40)]  # per update
    means = np.array([e.mean() if len(e) else np.nan for e in episodes])
    counts = np.array([len(e) for e in episodes])
    flat = np.concatenate(episodes)
    # whole updates: pick n so the cut falls on an update boundary
    n = int(counts[-7:].sum())
    assert np.isclose(last_episodes_mean(means, counts, n), flat[-n:].mean())
    assert np.isclose(last_episodes_mean(means, counts, 10**6), flat.mean())  # fewer than n
    assert np.isnan(last_episodes_mean(np.full(3, np.nan), np.zeros(3)))


def test_partial_oldest_update_uses_its_mean():
    # last update: 60 episodes of 1.0; the one before: 80 of 3.0 -> 40 of them are needed
    assert np.isclose(last_episodes_mean([3.0, 1.0], [80, 60]), (60 * 1.0 + 40 * 3.0) / 100)


def test_train_return_last100_per_seed_and_missing_seed():
    frame = pd.DataFrame({"seed": [0, 0, 1, 1], "update": [0, 1, 0, 1],
                          "episode_return_mean": [1.0, 2.0, np.nan, np.nan],
                          "episode_count": [50, 50, 0, 0]})
    out = train_return_last100(frame, 3)
    assert np.isclose(out[0], 1.5) and np.isnan(out[1]) and np.isnan(out[2])
    meta = {"final_eval_return": [1.0, None], "train_return_last100": [2.0, 3.0]}
    assert np.isnan(per_seed(meta, "final_eval")[1])
    assert per_seed(meta, "train_last100").tolist() == [2.0, 3.0]
