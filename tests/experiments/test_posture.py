"""experiments/posture.py's reading of a brax body's posture: the height of the torso's up axis
from the joint positions, for the planar bodies (the pitch is q[2]) and for ant (a free torso,
its orientation a quaternion in q[3:7]); each body's resting pose reads upright; the split
it writes for a bench report; and the committed posture files hold the split by its rule."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.experiments.scripts import load

posture = load("posture")
MUJOCO = Path(__file__).resolve().parents[2] / "benchmarks/mujoco-cpu"


def _q(kind: str, **parts) -> np.ndarray:
    q = np.zeros(15 if kind == "free" else 9)
    if kind == "free":
        q[3:7] = parts.get("quaternion", (1.0, 0.0, 0.0, 0.0))
    else:
        q[2] = parts.get("pitch", 0.0)
    return q


@pytest.mark.parametrize("kind, parts, up", [
    ("planar", {"pitch": 0.0}, 1.0),
    ("planar", {"pitch": math.pi}, -1.0),
    ("planar", {"pitch": -math.pi / 2}, 0.0),
    ("free", {}, 1.0),
    ("free", {"quaternion": (0.0, 1.0, 0.0, 0.0)}, -1.0),  # half a turn about x: on its back
    ("free", {"quaternion": (0.0, 0.0, 1.0, 0.0)}, -1.0),  # ... about y
    ("free", {"quaternion": (0.0, 0.0, 0.0, 1.0)}, 1.0),  # half a turn about z: still upright
    ("free", {"quaternion": (math.cos(math.pi / 4), 0.0, math.sin(math.pi / 4), 0.0)}, 0.0),
])
def test_the_torso_up_axis_height(kind, parts, up):
    assert float(posture.torso_up(_q(kind, **parts), kind)) == pytest.approx(up, abs=1e-6)


def test_a_batch_of_poses_reads_at_once():
    q = np.stack([_q("free"), _q("free", quaternion=(0.0, 1.0, 0.0, 0.0))])
    assert np.allclose(posture.torso_up(q, "free"), [1.0, -1.0])


@pytest.mark.parametrize("body", ["hopper", "walker2d", "halfcheetah", "ant"])
def test_each_bodys_resting_pose_reads_upright(body):
    """brax's own models: the pose each body starts from has its up axis straight up, so the
    joint layout `torso_up` assumes (q[2] the pitch; q[3:7] the quaternion) is the model's."""
    from brax import envs as brax_envs
    kind = posture.body_kind(f"brax:{body}")
    system = brax_envs.get_environment(body).sys
    assert kind == ("free" if body == "ant" else "planar")
    assert float(posture.torso_up(np.asarray(system.init_q), kind)) == pytest.approx(1.0)
    if kind == "free":
        assert system.q_size() == system.qd_size() + 1  # a free joint: 7 positions, 6 speeds


def test_a_body_it_does_not_read_is_named():
    with pytest.raises(ValueError, match="brax:humanoid is none of the bodies this reads"):
        posture.body_kind("brax:humanoid")


def test_the_split_it_writes():
    rows = [{"seed": s, "upside_down_share": share}
            for s, share in enumerate([0.97, 0.0, 0.51, 0.5, 0.0])]
    split = posture.posture_split(rows, "free")
    assert split == {"by": "posture", "rule": posture.FLIPPED_RULE["free"], "failing": [0, 2]}
    assert posture.posture_split([{**r, "upside_down_share": 0.0} for r in rows]) is None
    assert posture.posture_split([{**r, "upside_down_share": 1.0} for r in rows]) is None


def test_the_committed_posture_files_split_by_the_rule():
    for path in sorted((MUJOCO / "posture").glob("*.json")):
        data = json.loads(path.read_text())
        kind = posture.body_kind(data["env"])
        expected = posture.posture_split(data["seeds"], kind) if "seeds" in data else None
        assert data.get("split") == expected, path.name
