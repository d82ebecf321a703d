"""Exporters: a stored run to TensorBoard event files and to Weights & Biases (a fake `wandb`
module for what is logged, the real one offline for the files)."""

import sys
from pathlib import Path

import numpy as np
import pytest

from jaxrl.api import train
from jaxrl.cli import main
from jaxrl.runs.store import RunStore

TINY = dict(num_envs=4, num_steps=16, update_epochs=1, num_minibatches=1, hidden=(8,),
            progress=False, max_chunk_updates=2)


@pytest.fixture()
def store(tmp_path):
    return RunStore(tmp_path / "runs")


def _read_tensorboard_scalars(folder: Path) -> dict:
    """Parse TFRecord-framed event files (length, crc, payload, crc) into {tag: [(step, v)]}."""
    import struct

    from tensorboardX.proto import event_pb2

    out = {}
    for path in folder.glob("events.out.tfevents.*"):
        data = path.read_bytes()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            event = event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
            pos += 12 + length + 4
            for v in event.summary.value:
                out.setdefault(v.tag, []).append((event.step, v.simple_value))
    return out


def test_tensorboard_export_round_trip(store, capsys):
    r = train("ppo", env="probe:action", seeds=2, total_steps=64 * 4, runs_dir=store.root, **TINY)
    out = store.root / "tb"
    assert main(["export", "tensorboard", r.run_id, "--out", str(out),
                 "--runs-dir", str(store.root)]) == 0
    scalars = _read_tensorboard_scalars(out / "seed_1")
    expected = r.metrics[r.metrics.seed == 1].value_loss.to_numpy()
    got = [v for _, v in sorted(scalars["train/value_loss"])]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert [s for s, _ in sorted(scalars["train/value_loss"])] == [64, 128, 192, 256]
    assert "eval/return" in scalars


class _FakeWandbRun:
    def __init__(self, calls, kwargs):
        self.calls, self.kwargs, self.logged = calls, kwargs, []
        calls.append(self)

    def log(self, values, step):
        self.logged.append((step, dict(values)))

    def finish(self):
        self.finished = True


def test_wandb_export_logs_every_seed_and_step(store, monkeypatch):
    import types

    r = train("ppo", env="probe:action", seeds=2, total_steps=64 * 4, runs_dir=store.root, **TINY)
    calls = []
    fake = types.SimpleNamespace(init=lambda **kw: _FakeWandbRun(calls, kw))
    monkeypatch.setitem(sys.modules, "wandb", fake)
    from jaxrl.runs.export import to_wandb

    to_wandb(r.run_id, store=store)
    assert len(calls) == 2 and all(c.finished for c in calls)
    assert calls[0].kwargs["mode"] == "offline" and calls[0].kwargs["group"] == r.run_id
    steps = [s for s, _ in calls[1].logged]
    assert steps == sorted(steps) == [64, 128, 192, 256]
    logged = [v["train/value_loss"] for _, v in calls[1].logged]
    np.testing.assert_allclose(logged, r.metrics[r.metrics.seed == 1].value_loss, rtol=1e-6)
    assert "eval/return" in calls[1].logged[-1][1]


def test_wandb_export_writes_offline_runs(store, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_MODE", "offline")
    r = train("ppo", env="probe:action", seeds=2, total_steps=64 * 2, runs_dir=store.root, **TINY)
    assert main(["export", "wandb", r.run_id, "--runs-dir", str(store.root)]) == 0
    files = list((Path(r.run_dir) / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(files) == 2 and all(f.stat().st_size > 0 for f in files)
