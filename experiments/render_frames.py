"""The README's episode frames: train a CartPole, a MinAtar and a brax policy, render a video of
each (``docs/videos/*.mp4``, not committed) and keep one labelled frame of each
(``docs/frames/*.png``, committed).

    .venv/bin/python experiments/render_frames.py [--runs-dir runs]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from PIL import Image

import jaxrl

TASKS = [  # (name, algo, env, steps per seed, seeds, overrides)
    ("cartpole", "ppo", "CartPole-v1", 200_000, 2, {}),
    ("breakout-minatar", "ppo", "Breakout-MinAtar", 2_000_000, 2, {}),
    ("hopper", "ppo", "brax:hopper", 1_000_000, 1, {}),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs-dir", default=None)
    parser.add_argument("--out", default="docs")
    args = parser.parse_args()
    out = Path(args.out)
    (out / "frames").mkdir(parents=True, exist_ok=True)
    (out / "videos").mkdir(parents=True, exist_ok=True)
    summary = {}
    for name, algo, env, steps, seeds, overrides in TASKS:
        result = jaxrl.train(algo, env, seeds=seeds, total_steps=steps, runs_dir=args.runs_dir,
                             **overrides)
        best = int(result.final_eval_return.argmax())
        video = jaxrl.render(result.run_id, seed=best, height=240, runs_dir=args.runs_dir)
        video.save(out / "videos" / f"{name}.mp4")
        frame = video.frames[min(len(video.frames) - 1, 3 * len(video.frames) // 5)]
        Image.fromarray(frame).save(out / "frames" / f"{name}.png", optimize=True)
        summary[name] = {"run_id": result.run_id, "seed": best, "returns": video.returns,
                         "final_eval_return": result.final_eval_return.tolist(),
                         "env_steps_per_second": result.env_steps_per_second}
        print(name, json.dumps(summary[name]), flush=True)
    (out / "frames" / "runs.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
