"""Carry a run store from one lent GPU machine to the next, in parts small enough for the
device tool's transfers, so that a checkpointed bench entry longer than one lease can go on in
the next (`jaxrl bench --checkpoint-every` resumes an interrupted entry from its newest
checkpoint).

Written for the 30-minute leases of 2026-11-24 and not part of the GPU plan now: a loan gives
15 minutes of device time in one or two calls, fewer than a store's parts need each way (the
plan brings results back whole instead: `experiments/gpu_plan.py`). It stays for a machine held
long enough to use it.

The limits it works around (the device tool's README): files come back at most 16 MiB each
and 64 MiB a call; a call carries at most 64 MiB in, the working tree included. Six seeds of
PPO's Nature CNN with Adam's two moments are 121 MB of checkpoint, so the store travels as
parts over several calls each way.

    pack RUNS_DIR PARTS_DIR [--part-mib 15]
        one tar of the store, split into parts (``relay-000.part`` ...) and ``relay.json``
        (each part's size and sha256, the whole tar's, the runs in it). The store's derived
        catalog is left out, and so are checkpoints no resume reads: every step but the newest
        complete one of each unfinished run, and all of a finished run's. A run whose process
        died (killed at the lease's end) is marked interrupted first, on the host it ran on.
    arrange PARTS_DIR DEST [--call-mib 45]
        here, between leases: the parts into DEST/in1, DEST/in2, ... of at most --call-mib
        each (``relay.json`` in in1), one folder per call's ``carry``.
    unpack PARTS_DIR RUNS_DIR [--if-complete]
        check every part and the whole against ``relay.json``, then extract into RUNS_DIR,
        which must not already hold those runs. ``--if-complete``: with parts still missing,
        say which and exit 0 (a lease carries them over several calls).

On the machine: ``python experiments/lease_relay.py pack`` after killing the bench, and
``unpack`` after carrying the parts in (the lease-side verbs ``gpu_lease.sh`` had then).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from jaxrl.engine.checkpoint import complete_steps
from jaxrl.runs.store import Run, RunStore, record_if_dead

MANIFEST = "relay.json"
FORMAT = 1
MIB = 1 << 20


class RelayError(RuntimeError):
    """A relay that cannot be packed or unpacked as asked; the message names the part or run."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            h.update(block)
    return h.hexdigest()


def left_out(root: Path) -> set[Path]:
    """What ``pack`` leaves out of the store at ``root``: the derived catalog, writes cut
    short, and checkpoint steps no resume reads (a dead run is repaired to interrupted)."""
    skip = {root / ".catalog", *root.rglob(".*.tmp")}
    for folder in RunStore(root).run_dirs():
        meta = record_if_dead(folder)
        if meta.get("status") == "running":  # alive here, or from a host that cannot tell
            raise RelayError(f"run {folder.name} is still running (pid {meta.get('pid')} on "
                             f"{meta.get('host')}): stop it first (gpu_lease.sh stop)")
        ckpt = Run(folder, meta).checkpoint_dir
        if ckpt is None or not ckpt.is_dir():
            continue
        keep = complete_steps(ckpt)[-1:] if meta.get("status") != "finished" else []
        skip.update(p for p in ckpt.iterdir() if p.name not in {str(s) for s in keep})
    return skip


def pack(root: Path, parts_dir: Path, part_mib: float = 15.0) -> dict:
    """Pack the store at ``root`` into ``parts_dir``; returns the manifest written there."""
    root = root.resolve()
    if not root.is_dir():
        raise RelayError(f"no run store at {root}")
    parts_dir.mkdir(parents=True, exist_ok=True)
    if any(parts_dir.iterdir()):
        raise RelayError(f"{parts_dir} is not empty: pack into an empty folder")
    skip = left_out(root)
    part_bytes = max(1, int(part_mib * MIB))
    with tempfile.TemporaryDirectory(dir=parts_dir.parent) as tmp:
        whole = Path(tmp) / "store.tar"
        with tarfile.open(whole, "w") as tar:
            tar.add(root, arcname=".", filter=lambda info: None if root / info.name in skip
                    else info)
        parts = []
        with open(whole, "rb") as f:
            for i, chunk in enumerate(iter(lambda: f.read(part_bytes), b"")):
                name = f"relay-{i:03d}.part"
                (parts_dir / name).write_bytes(chunk)
                parts.append({"name": name, "bytes": len(chunk),
                              "sha256": hashlib.sha256(chunk).hexdigest()})
        manifest = {"format": FORMAT, "made_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                               time.gmtime()),
                    "bytes": whole.stat().st_size, "sha256": sha256_file(whole),
                    "runs": [p.name for p in RunStore(root).run_dirs()], "parts": parts}
    (parts_dir / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def read_manifest(parts_dir: Path) -> dict:
    path = parts_dir / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise RelayError(f"no {MANIFEST} in {parts_dir}: it travels with the first parts") \
            from None
    except (OSError, ValueError) as err:
        raise RelayError(f"{path} cannot be read: {err}") from None
    if manifest.get("format") != FORMAT:
        raise RelayError(f"{path}: relay format {manifest.get('format')!r}, expected {FORMAT}")
    return manifest


def missing_parts(parts_dir: Path, manifest: dict) -> list[str]:
    return [p["name"] for p in manifest["parts"] if not (parts_dir / p["name"]).is_file()]


def unpack(parts_dir: Path, root: Path) -> dict:
    """Check the parts in ``parts_dir`` and extract the store into ``root``."""
    manifest = read_manifest(parts_dir)
    missing = missing_parts(parts_dir, manifest)
    if missing:
        raise RelayError(f"{len(missing)} of {len(manifest['parts'])} parts are not in "
                         f"{parts_dir}: {', '.join(missing)}")
    damaged = [p["name"] for p in manifest["parts"]
               if sha256_file(parts_dir / p["name"]) != p["sha256"]]
    if damaged:
        raise RelayError(f"parts that do not match {MANIFEST} (damaged in transit?): "
                         f"{', '.join(damaged)}")
    present = [r for r in manifest["runs"] if (root / r).exists()]
    if present:
        raise RelayError(f"{root} already holds runs of this relay ({', '.join(present)}): "
                         "unpack into a store without them")
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        whole = Path(tmp) / "store.tar"
        with open(whole, "wb") as out:
            for p in manifest["parts"]:
                with open(parts_dir / p["name"], "rb") as f:
                    shutil.copyfileobj(f, out)
        if sha256_file(whole) != manifest["sha256"]:
            raise RelayError("the joined parts do not match the relay's sha256")
        with tarfile.open(whole) as tar:
            tar.extractall(root, filter="data")
    return manifest


def arrange(parts_dir: Path, dest: Path, call_mib: float = 45.0) -> list[list[str]]:
    """Copy the parts into ``dest/in1``, ``dest/in2``, ...: at most ``call_mib`` per folder,
    ``relay.json`` in the first. Returns the names per folder."""
    manifest = read_manifest(parts_dir)
    missing = missing_parts(parts_dir, manifest)
    if missing:
        raise RelayError(f"parts not in {parts_dir}: {', '.join(missing)}")
    budget = int(call_mib * MIB)
    if any(p["bytes"] > budget for p in manifest["parts"]):
        raise RelayError(f"a part is larger than --call-mib {call_mib}")
    groups: list[list[str]] = [[MANIFEST]]
    used = (parts_dir / MANIFEST).stat().st_size
    for p in manifest["parts"]:
        if used + p["bytes"] > budget:
            groups.append([])
            used = 0
        groups[-1].append(p["name"])
        used += p["bytes"]
    for i, names in enumerate(groups, 1):
        folder = dest / f"in{i}"
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy2(parts_dir / name, folder / name)
    return groups


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("pack")
    p.add_argument("runs_dir", type=Path)
    p.add_argument("parts_dir", type=Path)
    p.add_argument("--part-mib", type=float, default=15.0)
    a = sub.add_parser("arrange")
    a.add_argument("parts_dir", type=Path)
    a.add_argument("dest", type=Path)
    a.add_argument("--call-mib", type=float, default=45.0)
    u = sub.add_parser("unpack")
    u.add_argument("parts_dir", type=Path)
    u.add_argument("runs_dir", type=Path)
    u.add_argument("--if-complete", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.verb == "pack":
            m = pack(args.runs_dir, args.parts_dir, args.part_mib)
            print(f"packed {len(m['runs'])} runs: {m['bytes'] / MIB:.1f} MiB in "
                  f"{len(m['parts'])} parts in {args.parts_dir}")
        elif args.verb == "arrange":
            for i, names in enumerate(arrange(args.parts_dir, args.dest, args.call_mib), 1):
                print(f"{args.dest / f'in{i}'}: {' '.join(names)}")
        else:
            if args.if_complete:
                missing = missing_parts(args.parts_dir, read_manifest(args.parts_dir))
                if missing:
                    print(f"waiting for {len(missing)} parts: {', '.join(missing)}")
                    return 0
            m = unpack(args.parts_dir, args.runs_dir)
            print(f"unpacked {len(m['runs'])} runs into {args.runs_dir}: "
                  f"{', '.join(m['runs'])}")
    except RelayError as err:
        print(f"lease_relay: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
