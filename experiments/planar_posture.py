"""How each seed of a finished run on a planar brax body moves: upright or on its back, how fast.

A halfcheetah policy can settle on running flipped over, on its back, a local optimum that
earns less than running upright; a bench report sees only the return. Hopper, walker2d and
halfcheetah share their first three joints (``rootx``, ``rootz``, ``rooty``: the torso's slide
forward, its height and its pitch). This plays each seed's
stored policy (`jaxrl.load_policy`, its mode) for whole episodes in fresh envs and records the
torso's pitch (brax's ``rooty``, ``q[2]``) and forward speed (``qd[0]``) at every step.

    python experiments/planar_posture.py RUN_ID [--episodes 4] [--checkpoint DIR ...]
        [--out FILE.json]

Per seed: the episodes' mean return, the share of steps with the torso upside down
(``cos(rooty) < 0``), the mean forward speed (m/s), the mean pitch's cosine and each episode's
length (hopper and walker2d end an episode when they fall). Prints one
line a seed and writes the JSON where ``--out`` says. Each ``--checkpoint`` folder adds the
same for the policy of its newest checkpoint, with the env steps a seed it had trained for:
when a seed turned over.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import jax
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.render import unwrapped  # noqa: E402
from jaxrl.api import load_policy  # noqa: E402
from jaxrl.engine.checkpoint import Checkpointer  # noqa: E402
from jaxrl.engine.members import seed_keys  # noqa: E402
from jaxrl.trained.demonstrations import play  # noqa: E402
from jaxrl.trained.policies import acting_state  # noqa: E402

ROOTY, ROOTX = 2, 0  # the planar bodies' joint order: rootx, rootz, rooty, then the legs
PLANAR = ("hopper", "walker2d", "halfcheetah")


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


def checkpointed(stored, directory: Path):
    """``stored`` with the acting state of the newest checkpoint in ``directory`` (a run's
    ``checkpoints`` folder, or one extracted from git history) in place of the final one, and
    the env steps a seed it had trained for. The rollout programs stay shared: the state is
    their argument."""
    algorithm, env, env_params, config = (stored.algorithm, stored.env, stored.env_params,
                                          stored.config)
    like = jax.eval_shape(jax.vmap(lambda k: algorithm.init(k, env, env_params, config)),
                          seed_keys(0, stored.seeds))
    checkpointer = Checkpointer(directory, async_save=False)
    try:
        found = checkpointer.restore_latest(like)
    finally:
        checkpointer.close()
    if found is None:
        raise SystemExit(f"no usable checkpoint in {directory}")
    _, state, meta = found
    steps = meta["chunks_done"] * meta["chunk_updates"] * config.num_envs * config.num_steps
    return dataclasses.replace(stored, state=acting_state(state), _seed_states={}), int(steps)


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
    stored = load_policy(args.run_id)
    if not any(body in stored.env_name for body in PLANAR):
        parser.error(f"run {args.run_id} trained on {stored.env_name}; the planar bodies are "
                     f"{', '.join(PLANAR)}")
    record = posture_recorder(stored.env)
    report = {"run_id": args.run_id, "env": stored.env_name, "episodes": args.episodes,
              "deterministic": True, "checkpoints": []}
    for folder in args.checkpoint:
        at, steps = checkpointed(stored, folder)
        rows = [seed_posture(at, s, args.episodes, record) for s in range(stored.seeds)]
        print(f"-- after {steps:,} env steps a seed ({folder})")
        _print(rows)
        report["checkpoints"].append({"env_steps": steps, "seeds": rows})
    rows = [seed_posture(stored, s, args.episodes, record) for s in range(stored.seeds)]
    print("-- final")
    _print(rows)
    report["seeds"] = rows
    if not args.checkpoint:
        del report["checkpoints"]
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
