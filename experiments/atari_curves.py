"""Per-seed Atari learning curves from a run store's metrics (or one Parquet file of them).

    python experiments/atari_curves.py METRICS.parquet|RUNS_DIR OUT_DIR [--block 125000]
    python experiments/atari_curves.py CURVES.csv OUT.png [--title TEXT]   # redraw a table

Writes ``curves.csv`` (game, block end in agent steps, frames, seed, games finished in the
block, their mean score) and ``curves.png`` (one panel per game, one line per seed). A block's
score is the mean over the whole games that ended in it (``episode_return_mean`` weighted by
``episode_count``: the game score, not the clipped training reward). The x axis counts agent
steps, the unit of the suites' budgets; the axis on top gives the same points in frames (a
frame skip of 4).
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


def plot(table: pd.DataFrame, path: Path, title: str = "PPO") -> None:
    """One panel per game, a line per seed (the same colour for a seed in every panel, in the
    legend once), x in agent steps with frames on the top axis."""
    games = sorted(table["game"].unique())
    fig, axes = plt.subplots(1, len(games), figsize=(5 * len(games), 3.8), squeeze=False)
    for ax, game in zip(axes[0], games):
        for seed, s in table[table["game"] == game].groupby("seed"):
            ax.plot(s["steps"] / 1e6, s["score"], label=f"seed {seed}", lw=1.2,
                    color=f"C{int(seed) % 10}")
        ax.set_title(f"{title} {game}, per seed", fontsize=10)
        ax.set(xlabel="agent steps (M)", ylabel="game score (block mean)")
        top = ax.secondary_xaxis("top", functions=(lambda x: 4 * x, lambda x: x / 4))
        top.set_xlabel("frames (M, frame skip 4)", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--block", type=int, default=125_000, help="agent steps per curve point")
    p.add_argument("--title", default="PPO", help="what each panel's title starts with")
    args = p.parse_args()
    if args.source.suffix == ".csv":  # a table this script wrote: redraw it
        plot(pd.read_csv(args.source), args.out, args.title)
        return
    table = curves(load(args.source), args.block)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "curves.csv", index=False)
    plot(table, args.out / "curves.png", args.title)
    wide = table.pivot_table(index=["game", "frames"], columns="seed", values="score")
    print(wide.round(1).to_string())


if __name__ == "__main__":
    main()
