"""How each seed of a finished run on a brax body moves: upright or on its back, how fast.

A halfcheetah policy can settle on running flipped over, on its back, a local optimum that
earns less than running upright; a bench report sees only the return. This plays each seed's
stored policy (`jaxrl.load_policy`, its mode) for whole episodes in fresh envs and records, at
every step, how far the torso's up axis points up (`torso_up`) and its forward speed (``qd[0]``).
Hopper, walker2d and halfcheetah are planar: their first three joints are the torso's slide
forward, its height and its pitch (``rootx``, ``rootz``, ``rooty``), so the up axis's height is
``cos(rooty)``. Ant's torso is a free body: ``q[3:7]`` is its orientation as a unit quaternion
``(w, x, y, z)`` and the up axis's height is ``1 - 2 (x^2 + y^2)``.

    python experiments/posture.py RUN_ID [--episodes 4] [--checkpoint DIR ...] [--out FILE.json]

Per seed: the episodes' mean return, the share of steps with the torso upside down (its up axis
pointing down), the mean forward speed (m/s), the mean height of the up axis (``mean_up``: 1
upright, -1 on its back) and each episode's length (hopper, walker2d and ant end an episode when
the body falls out of its healthy range). Prints one line a seed and writes the JSON where
``--out`` says; where some of the final policies run upside down on more than half of their
steps and some do not, the JSON records those seeds as failing (``split``, `posture_split`), a
file ``jaxrl runs bench --split-evidence`` takes. Each ``--checkpoint`` folder adds the same for
the policy of its newest checkpoint (`jaxrl.load_policy(..., checkpoint=)`), with the env steps
a seed it had trained for: when a seed turned over. A run that kept no final policy is read from
its checkpoints alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.render import unwrapped  # noqa: E402
from jaxrl.api import load_policy  # noqa: E402
from jaxrl.runs.store import RunStore  # noqa: E402
from jaxrl.trained.demonstrations import play  # noqa: E402
from jaxrl.trained.policies import POLICY_FILE  # noqa: E402

ROOTY, ROOTX = 2, 0  # the planar bodies' joint order: rootx, rootz, rooty, then the legs
QUATERNION = slice(3, 7)  # a free torso's orientation in q, after its position: (w, x, y, z)
#: the bodies this reads: "planar" (the torso's pitch is q[2]) or "free" (a quaternion in q[3:7])
BODIES = {"hopper": "planar", "walker2d": "planar", "halfcheetah": "planar", "ant": "free"}
FLIPPED_SHARE = 0.5  # a seed runs on its back when upside down on more than this share of steps
FLIPPED_RULE = {"planar": "ran upside down (cos(rooty) < 0) on more than half of their steps, "
                          "each policy played by its mode",
                "free": "ran upside down (the torso's up axis pointing down) on more than half "
                        "of their steps, each policy played by its mode"}


def body_kind(env_name: str) -> str:
    """``"planar"`` or ``"free"`` for a brax body `BODIES` names (``brax:ant`` -> ``"free"``);
    ValueError naming the bodies for any other env."""
    body = env_name.split(":")[-1]
    if body not in BODIES:
        raise ValueError(f"{env_name} is none of the bodies this reads: {', '.join(BODIES)}")
    return BODIES[body]


def torso_up(q, kind: str):
    """The height of the torso's up axis (the cosine of its tilt from upright) from the joint
    positions ``q [..., nq]``: ``cos(q[..., 2])`` for a planar body, ``1 - 2 (x^2 + y^2)`` of the
    quaternion ``q[..., 3:7]`` for a free one. ``[...]``, in [-1, 1]; below 0 is upside down."""
    if kind == "planar":
        return jnp.cos(q[..., ROOTY])
    x, y = q[..., QUATERNION.start + 1], q[..., QUATERNION.start + 2]
    return 1.0 - 2.0 * (x * x + y * y)


def posture_recorder(env, kind: str):
    """`play`'s ``record`` for ``env`` (the stored policy's wrapped env) of a body of ``kind``
    (`body_kind`): each step's torso up-axis height (`torso_up`) and forward speed
    ``[episodes]``."""

    def record(obs, env_state, action, reward, terminated, truncated) -> dict:
        pipeline = unwrapped(env, env_state)[1].brax_state.pipeline_state
        return {"up": torso_up(pipeline.q, kind), "speed": pipeline.qd[..., ROOTX]}

    return record


def seed_posture(stored, seed: int, episodes: int, record, key_seed: int = 0) -> dict:
    """One seed's episodes: mean return, upside-down share, mean speed, mean up-axis height
    and each episode's length. ``record``: one `posture_recorder` for every seed, so that they
    share one program."""
    played = play(stored, seed, episodes, jax.random.key(key_seed), record=record)
    active = played["active"]
    up, speed = played["up"][active], played["speed"][active]
    return {"seed": seed, "return": float(np.nanmean(played["returns"])),
            "episode_returns": [float(r) for r in played["returns"]],
            "upside_down_share": float(np.mean(up < 0)), "mean_up": float(np.mean(up)),
            "mean_speed": float(np.mean(speed)),
            "episode_lengths": [int(n) for n in active.sum(0)]}


def posture_split(rows: list[dict], kind: str = "planar") -> dict | None:
    """The seeds of ``rows`` (`seed_posture`) that run on their backs, as the split a bench
    report takes (`jaxrl.studies.bench.split_evidence`); None unless some do and some do not."""
    failing = [r["seed"] for r in rows if r["upside_down_share"] > FLIPPED_SHARE]
    if not 0 < len(failing) < len(rows):
        return None
    return {"by": "posture", "rule": FLIPPED_RULE[kind], "failing": failing}


def _print(rows: list[dict]) -> None:
    for r in rows:
        print(f"seed {r['seed']}: return {r['return']:9.1f}  upside down "
              f"{r['upside_down_share']:6.1%}  speed {r['mean_speed']:6.2f} m/s  "
              f"mean up {r['mean_up']:+.2f}  lengths {r['episode_lengths']}")


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
    try:
        kind = body_kind(env_name)
    except ValueError as err:
        parser.error(f"run {args.run_id}: {err}")
    record = posture_recorder(policies[0].env, kind)
    report = {"run_id": args.run_id, "env": env_name, "episodes": args.episodes,
              "deterministic": True, "checkpoints": []}
    for stored in policies:
        rows = [seed_posture(stored, s, args.episodes, record) for s in range(stored.seeds)]
        final = has_final and stored is policies[-1]
        print("-- final" if final else f"-- after {stored.trained_steps:,} env steps a seed")
        _print(rows)
        if final:
            report["seeds"] = rows
            if (split := posture_split(rows, kind)) is not None:
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
