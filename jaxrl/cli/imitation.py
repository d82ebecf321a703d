"""``jaxrl demos``: record a stored run's policy as demonstrations (`jaxrl.api.demos`)."""

from __future__ import annotations

import numpy as np

from jaxrl.api import demos
from jaxrl.cli.common import check_writable, write_json
from jaxrl.runs.demos import load_demos


def cmd_demos(args) -> int:
    check_writable(args.json)
    demo_id = demos(args.run_id, seed=args.seed, episodes=args.episodes,
                    deterministic=not args.sampled, key_seed=args.key_seed,
                    runs_dir=args.runs_dir)
    recorded = load_demos(demo_id, args.runs_dir)
    meta = recorded.meta
    print(f"{demo_id}: {meta['episodes']} episodes ({recorded.num_steps} steps) of run "
          f"{args.run_id} seed {args.seed}, mean return {np.mean(recorded.returns):.1f} "
          f"(min {np.min(recorded.returns):.1f}, max {np.max(recorded.returns):.1f})")
    write_json(args.json, meta | {"demo_id": demo_id, "steps": recorded.num_steps})
    return 0
