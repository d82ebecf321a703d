"""Per-seed Atari learning curves from a run store's metrics (or one Parquet file of them).

    python experiments/atari_curves.py METRICS.parquet|RUNS_DIR OUT_DIR [--block 125000]

Writes ``curves.csv`` (game, block end in agent steps, frames, seed, games finished in the
block, their mean score) and ``curves.png`` (one panel per game, one line per seed). A block's
score is the mean over the whole games that ended in it (``episode_return_mean`` weighted by
``episode_count``: the game score, not the clipped training reward).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd


def load(source: Path) -> pd.DataFrame:
    if source.is_dir():
        files = sorted(source.glob("*/metrics/*.parquet"))
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    return pd.read_parquet(source)


def curves(metrics: pd.DataFrame, block: int) -> pd.DataFrame:
    """``[rows of (game, steps, frames, seed, games, score)]``, one per block and seed."""
    m = metrics[metrics["episode_count"] > 0].copy()
    m["game"] = m["run_id"].str.extract(r"atari-(\w+)-")[0]
    m["steps"] = (m["env_steps"] // block + 1).astype(int) * block
    m["score_sum"] = m["episode_return_mean"] * m["episode_count"]
    g = m.groupby(["game", "steps", "seed"])[["score_sum", "episode_count"]].sum().reset_index()
    g["score"] = (g["score_sum"] / g["episode_count"]).round(2)
    g["frames"] = g["steps"] * 4
    g["episode_count"] = g["episode_count"].astype(int)
    return g.rename(columns={"episode_count": "games"})[
        ["game", "steps", "frames", "seed", "games", "score"]]


def plot(table: pd.DataFrame, path: Path) -> None:
    games = sorted(table["game"].unique())
    fig, axes = plt.subplots(1, len(games), figsize=(5 * len(games), 3.6), squeeze=False)
    for ax, game in zip(axes[0], games):
        for seed, s in table[table["game"] == game].groupby("seed"):
            ax.plot(s["frames"] / 1e6, s["score"], label=f"seed {seed}", lw=1.2)
        ax.set(title=f"PPO {game}", xlabel="frames (M)", ylabel="game score (block mean)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--block", type=int, default=125_000, help="agent steps per curve point")
    args = p.parse_args()
    table = curves(load(args.source), args.block)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "curves.csv", index=False)
    plot(table, args.out / "curves.png")
    wide = table.pivot_table(index=["game", "frames"], columns="seed", values="score")
    print(wide.round(1).to_string())


if __name__ == "__main__":
    main()
