"""experiments/lease_relay.py: a bench entry killed on one machine goes on from a store carried
in parts to another (a new folder here), and bad relays fail with the part they name."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxrl.runs.checkpoint_steps import complete_steps
from jaxrl.runs.runmeta import process_identity
from jaxrl.studies.bench import runner as benchmod
from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2]
SUITE = """
name: relay
seeds: 2
eval_episodes: 2
entries:
  - name: ppo
    algo: ppo
    env: CartPole-v1
    total_steps: 3200
    config: {num_envs: 2, num_steps: 8, hidden: [8], num_minibatches: 2, update_epochs: 1}
"""


relay = load("lease_relay")


def _run_folder(store: Path) -> Path:
    (folder,) = [p for p in store.iterdir() if (p / "run.json").is_file()]
    return folder


@pytest.fixture(scope="module")
def killed_bench(tmp_path_factory):
    """A bench entry of 4 chunks of 50 updates, checkpointed every chunk and SIGKILLed after
    the third's checkpoint: its store, and the suite file."""
    tmp = tmp_path_factory.mktemp("relay")
    suite = tmp / "relay.yaml"
    suite.write_text(SUITE)
    store = tmp / "lease1"
    argv = [sys.executable, "-m", "jaxrl.cli.faults", "3", "bench", str(suite),
            "--runs-dir", str(store), "--checkpoint-every", "1", "--no-progress"]
    killed = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False,
                            cwd=ROOT)
    assert killed.returncode == -9, killed.stderr[-2000:]
    return store, suite


def test_a_killed_entry_goes_on_from_the_relayed_store(killed_bench, tmp_path):
    store, suite = killed_bench
    folder = _run_folder(store)
    ckpt = folder / "checkpoints"
    assert len(complete_steps(ckpt)) >= 2  # several steps on disk; only the newest travels
    parts = tmp_path / "parts"
    manifest = relay.pack(store, parts, part_mib=0.02)
    assert len(manifest["parts"]) > 3 and manifest["runs"] == [folder.name]
    # the kill left the run "running"; packing on its host marked it interrupted
    assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"

    calls = relay.arrange(parts, tmp_path / "carried", call_mib=0.05)
    assert calls[0][0] == "relay.json" and len(calls) > 1
    lease2 = tmp_path / "lease2_in"  # what the next machine gathers from its calls
    lease2.mkdir()
    for i in range(1, len(calls) + 1):
        for f in (tmp_path / "carried" / f"in{i}").iterdir():
            os.replace(f, lease2 / f.name)

    runs = tmp_path / "lease2"
    relay.unpack(lease2, runs)
    moved = runs / folder.name
    assert complete_steps(moved / "checkpoints") == complete_steps(ckpt)[-1:]
    assert not (runs / ".catalog").exists()
    result = benchmod.bench(str(suite), runs_dir=str(runs), progress=False)
    assert result.ran == ["ppo"]
    meta = json.loads((moved / "run.json").read_text())
    assert meta["status"] == "finished" and meta.get("resumed")  # resumed, not retrained
    assert len(list((moved / "metrics").glob("chunk-*.parquet"))) == 4
    assert result.table.set_index("entry").loc["ppo"].total_steps == 3200


def test_bad_relays_name_what_is_wrong(killed_bench, tmp_path):
    store, _ = killed_bench
    parts = tmp_path / "parts"
    manifest = relay.pack(store, parts, part_mib=0.02)
    with pytest.raises(relay.RelayError, match="not empty"):
        relay.pack(store, parts)
    meta_path = _run_folder(store) / "run.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "status": "running", **process_identity()}))
    with pytest.raises(relay.RelayError, match=r"still running.*stop it first"):
        relay.pack(store, tmp_path / "live")  # a bench still training here is not packed
    meta_path.write_text(json.dumps(meta))
    names = [p["name"] for p in manifest["parts"]]
    first = parts / names[1]
    data = first.read_bytes()
    first.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(relay.RelayError, match=f"damaged in transit.*{names[1]}"):
        relay.unpack(parts, tmp_path / "a")
    first.write_bytes(data)
    (parts / names[-1]).unlink()
    with pytest.raises(relay.RelayError, match=f"1 of {len(names)} parts.*{names[-1]}"):
        relay.unpack(parts, tmp_path / "b")
    assert relay.main(["unpack", str(parts), str(tmp_path / "c"), "--if-complete"]) == 0
    assert not (tmp_path / "c").exists()  # nothing extracted while parts are missing
    with pytest.raises(relay.RelayError, match=r"no relay\.json"):
        relay.unpack(tmp_path, tmp_path / "d")
