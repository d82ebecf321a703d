"""How each seed of a finished run on a planar brax body moves: upright or on its back, how fast.

A halfcheetah policy can settle on running flipped over, on its back, a local optimum that
earns less than running upright; a bench report sees only the return. Hopper, walker2d and
halfcheetah share their first three joints (``rootx``, ``rootz``, ``rooty``: the torso's slide
forward, its height and its pitch). This plays each seed's stored policy (`jaxrl.load_policy`,
its mode) for whole episodes in fresh envs and records the torso's pitch (``q[2]``) and forward
speed (``qd[0]``) at every step.

    python experiments/planar_posture.py RUN_ID [--episodes 4] [--checkpoint DIR ...]
        [--out FILE.json]

Per seed: the episodes' mean return, the share of steps with the torso upside down
(``cos(rooty) < 0``), the mean forward speed (m/s), the mean pitch's cosine and each episode's
length (hopper and walker2d end an episode when they fall). Prints one line a seed and writes
the JSON where ``--out`` says; where some of the final policies run upside down on more than
half of their steps and some do not, the JSON records those seeds as failing (``split``,
`posture_split`), a file ``jaxrl runs bench --split-evidence`` takes. Each ``--checkpoint`` folder adds the same for the policy of its
newest checkpoint (`jaxrl.load_policy(..., checkpoint=)`), with the env steps a seed it had
trained for: when a seed turned over. A run that kept no final policy is read from its
checkpoints alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.render import unwrapped  # noqa: E402
from jaxrl.api import load_policy  # noqa: E402
from jaxrl.runs.store import RunStore  # noqa: E402
from jaxrl.trained.demonstrations import play  # noqa: E402
from jaxrl.trained.policies import POLICY_FILE  # noqa: E402

ROOTY, ROOTX = 2, 0  # the planar bodies' joint order: rootx, rootz, rooty, then the legs
PLANAR = ("hopper", "walker2d", "halfcheetah")
FLIPPED_SHARE = 0.5  # a seed runs on its back when upside down on more than this share of steps
FLIPPED_RULE = ("ran upside down (cos(rooty) < 0) on more than half of their steps, "
                "each policy played by its mode")


def posture_recorder(env):
    """`play`'s ``record`` for ``env`` (the stored policy's wrapped env): each step's torso
    pitch and forward speed ``[episodes]``."""

    def record(obs, env_state, action, reward, terminated, truncated) -> dict:
        pipeline = unwrapped(env, env_state)[1].brax_state.pipeline_state
        return {"pitch": pipeline.q[..., ROOTY], "speed": pipeline.qd[..., ROOTX]}

    return record


def seed_posture(stored, seed: int, episodes: int, record, key_seed: int = 0) -> dict:
    """One seed's episodes: mean return, upside-down share, mean speed, mean cos(pitch) and
    each episode's length. ``record``: one `posture_recorder` for every seed, so that they
    share one program."""
    played = play(stored, seed, episodes, jax.random.key(key_seed), record=record)
    active = played["active"]
    pitch, speed = played["pitch"][active], played["speed"][active]
    return {"seed": seed, "return": float(np.nanmean(played["returns"])),
            "episode_returns": [float(r) for r in played["returns"]],
            "upside_down_share": float(np.mean(np.cos(pitch) < 0)),
            "mean_cos_pitch": float(np.mean(np.cos(pitch))),
            "mean_speed": float(np.mean(speed)),
            "episode_lengths": [int(n) for n in active.sum(0)]}


def posture_split(rows: list[dict]) -> dict | None:
    """The seeds of ``rows`` (`seed_posture`) that run on their backs, as the split a bench
    report takes (`jaxrl.studies.bench.split_evidence`); None unless some do and some do not."""
    failing = [r["seed"] for r in rows if r["upside_down_share"] > FLIPPED_SHARE]
    if not 0 < len(failing) < len(rows):
        return None
    return {"by": "posture", "rule": FLIPPED_RULE, "failing": failing}


def _print(rows: list[dict]) -> None:
    for r in rows:
        print(f"seed {r['seed']}: return {r['return']:9.1f}  upside down "
              f"{r['upside_down_share']:6.1%}  speed {r['mean_speed']:6.2f} m/s  "
              f"mean cos(pitch) {r['mean_cos_pitch']:+.2f}  lengths {r['episode_lengths']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_id")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--checkpoint", type=Path, action="append", default=[],
                        help="a checkpoints folder of the run: its newest checkpoint's policy "
                             "as well as the final one (repeatable)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    has_final = (RunStore().root / args.run_id / POLICY_FILE).is_file()
    policies = [load_policy(args.run_id, checkpoint=f) for f in args.checkpoint]
    policies += [load_policy(args.run_id)] if has_final or not policies else []
    env_name = policies[0].env_name
    if not any(body in env_name for body in PLANAR):
        parser.error(f"run {args.run_id} trained on {env_name}; the planar bodies are "
                     f"{', '.join(PLANAR)}")
    record = posture_recorder(policies[0].env)
    report = {"run_id": args.run_id, "env": env_name, "episodes": args.episodes,
              "deterministic": True, "checkpoints": []}
    for stored in policies:
        rows = [seed_posture(stored, s, args.episodes, record) for s in range(stored.seeds)]
        final = has_final and stored is policies[-1]
        print("-- final" if final else f"-- after {stored.trained_steps:,} env steps a seed")
        _print(rows)
        if final:
            report["seeds"] = rows
            if (split := posture_split(rows)) is not None:
                report["split"] = split
        else:
            report["checkpoints"].append({"env_steps": stored.trained_steps, "seeds": rows})
    if not args.checkpoint:
        del report["checkpoints"]
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
