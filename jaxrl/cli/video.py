"""``jaxrl render``: a video of a stored run's policy (`jaxrl.trained.video`)."""

from __future__ import annotations

from pathlib import Path

from envs.render import RenderError
from jaxrl.api import render
from jaxrl.cli.common import check_writable
from jaxrl.trained.video import FORMATS


def cmd_render(args) -> int:
    if Path(args.out).suffix.lower() not in FORMATS:
        raise RenderError(f"--out {args.out}: videos are {' or '.join(FORMATS)}")
    check_writable(args.out, "--out")
    video = render(args.run_id, seed=args.seed, episodes=args.episodes,
                   deterministic=not args.sampled, key_seed=args.key_seed, height=args.height,
                   runs_dir=args.runs_dir, checkpoint=args.checkpoint)
    path = video.save(args.out)
    returns = ", ".join(f"{r:.1f}" for r in video.returns)
    h, w = video.frames.shape[1:3]
    print(f"{path}: {len(video.frames)} frames {w}x{h} at {video.fps:g} fps; run {args.run_id} "
          f"seed {args.seed} ({'sampled' if args.sampled else 'deterministic'}"
          f"{', checkpoint ' + args.checkpoint if args.checkpoint else ''}), "
          f"episode returns {returns}")
    return 0
