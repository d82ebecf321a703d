"""The run store's faults and hostile input, run by hand against the real command line.

Each case does what a user (or a hostile one) would do and records, per command, the exit
status, how many lines it wrote to stderr and the first of them; at the end, ``jaxrl runs ls``
over every store must still list each intact run. Real faults where the machine allows them
(root: a read-only bind mount, a 256 KiB tmpfs for a full disk), a SIGSTOPped lock holder, a
SIGINT during a query, two resumes racing.

    python experiments/store_faults.py --out benchmarks/store-faults   # results.json, report.md

Needs Linux and root for the mounts (the cases that need them are reported as skipped
otherwise). Takes about two minutes on 2 cores (three tiny trainings compile).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "jaxrl.cli"]
TINY = ["--seeds", "2", "--total-steps", "2048", "--no-progress",
        "--set", "num_envs=4", "--set", "num_steps=16", "--set", "hidden=(16,16)"]


def run(args: list[str], timeout: float = 120, env: dict | None = None) -> dict:
    """One command: exit status, stderr line count and first line, wall seconds."""
    start = time.monotonic()
    try:
        out = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                             env={**os.environ, **(env or {})}, check=False)
        code, err, stdout = out.returncode, out.stderr, out.stdout
    except subprocess.TimeoutExpired as exc:
        code, err, stdout = "timeout", (exc.stderr or b"").decode() if isinstance(
            exc.stderr, bytes) else (exc.stderr or ""), ""
    lines = [line for line in err.splitlines() if line.strip()]
    return {"command": "jaxrl " + " ".join(args), "exit": code, "stderr_lines": len(lines),
            "first_line": lines[0][:160] if lines else "", "stdout_lines": len(stdout.splitlines()),
            "seconds": round(time.monotonic() - start, 2)}


def train_run(store: Path, *extra: str, kill_after_chunk: int | None = None) -> str:
    """A tiny recorded PPO CartPole run (SIGKILLed after chunk ``kill_after_chunk``'s
    checkpoint when given: `jaxrl.cli.faults`); its run id."""
    cli = CLI if kill_after_chunk is None else [
        sys.executable, "-m", "jaxrl.cli.faults", str(kill_after_chunk)]
    out = subprocess.run([*cli, "train", "ppo", *TINY, "--runs-dir", str(store), *extra],
                         capture_output=True, text=True, check=False)
    ids = sorted(p.name for p in store.iterdir() if (p / "run.json").is_file())
    if not ids:
        raise SystemExit(f"the tiny training run failed: {out.stderr[-2000:]}")
    return ids[-1]


def copy_run(store: Path, run_id: str, new_id: str, **fields) -> Path:
    """A copy of a run folder under another id, with ``fields`` set in its run.json."""
    folder = store / new_id
    shutil.copytree(store / run_id, folder, ignore=shutil.ignore_patterns("checkpoints"))
    meta = json.loads((folder / "run.json").read_text())
    meta.update(run_id=new_id, **fields)
    (folder / "run.json").write_text(json.dumps(meta))
    return folder


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@contextlib.contextmanager
def mounted(kind: str, target: Path, source: Path | None = None):
    """A read-only bind mount of ``source`` at ``target`` or a tiny tmpfs; None if refused."""
    target.mkdir(parents=True, exist_ok=True)
    if kind == "ro":
        cmds = [["mount", "--bind", str(source), str(target)],
                ["mount", "-o", "remount,ro,bind", str(target)]]
    else:
        cmds = [["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(target)]]
    ok = all(subprocess.run(c, capture_output=True, check=False).returncode == 0 for c in cmds)
    try:
        yield target if ok else None
    finally:
        subprocess.run(["umount", str(target)], capture_output=True, check=False)


def listed(store: Path) -> dict:
    """``runs ls`` of a store: the run ids it printed, and the command's outcome."""
    out = subprocess.run([*CLI, "runs", "--runs-dir", str(store), "ls"], capture_output=True,
                         text=True, timeout=60, check=False)
    ids = {p.name for p in store.iterdir() if (p / "run.json").is_file()} if store.is_dir() else set()
    return {"exit": out.returncode, "listed": sorted(i for i in ids if i in out.stdout),
            "folders": sorted(ids)}


# -- the cases -----------------------------------------------------------------------------------
def read_only(base: Path, good: str) -> dict:
    src = base / "ro-src"
    src.mkdir()
    shutil.copytree(base / "main" / good, src / good, ignore=shutil.ignore_patterns("checkpoints"))
    copy_run(src, good, "dead-running-run", status="running", pid=dead_pid())
    with mounted("ro", base / "ro", src) as ro:
        if ro is None:
            return {"skipped": "mount --bind refused (needs root)"}
        d = ["--runs-dir", str(ro)]
        rows = [run(["runs", *d, "ls"]), run(["runs", *d, "sql", "select count(*) from metrics"]),
                run(["runs", *d, "top", "--env", "CartPole-v1"]),
                run(["runs", *d, "show", "dead-running-run"]), run(["runs", *d, "latest"]),
                run(["plot", "--env", "CartPole-v1", "--runs-dir", str(ro),
                     "--out", str(base / "ro.png")]),
                run(["runs", *d, "demos"]), run(["runs", *d, "check"]),
                run(["train", "ppo", *TINY, *d]), run(["resume", "dead-running-run", *d]),
                run(["demos", good, "--episodes", "1", *d]),
                run(["runs", *d, "check", "--quarantine"])]
        return {"rows": rows, "after": listed(ro)}


def full_disk(base: Path, good: str) -> dict:
    with mounted("tmpfs", base / "tiny") as tiny:
        if tiny is None:
            return {"skipped": "mount -t tmpfs refused (needs root)"}
        store = tiny / "runs"
        store.mkdir()
        shutil.copytree(base / "main" / good, store / good,
                        ignore=shutil.ignore_patterns("checkpoints", "*.png"))
        filler = tiny / "filler"
        with contextlib.suppress(OSError), open(filler, "wb") as f:
            f.write(b"\0" * (1 << 20))
        d = ["--runs-dir", str(store)]
        rows = [run(["train", "ppo", *TINY, *d]), run(["runs", *d, "ls"]),
                run(["runs", *d, "check"])]
        leftovers = [str(p.relative_to(tiny)) for p in tiny.rglob("*.tmp")]
        filler.unlink()
        after = listed(store)
        return {"rows": rows, "temp_files_left": leftovers, "after": after}


def stuck_lock(base: Path) -> dict:
    store = base / "main"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import os, signal, sys; from jaxrl.runs import catalog; from pathlib import Path\n"
        f"with catalog.locked(Path({str(store)!r})):\n"
        "    print('held', flush=True); os.kill(os.getpid(), signal.SIGSTOP)")],
        stdout=subprocess.PIPE, text=True)
    try:
        holder.stdout.readline()
        d = ["--runs-dir", str(store)]
        rows = [run(["runs", *d, "ls"], timeout=60),
                run(["runs", *d, "sql", "select count(*) from runs"], timeout=60),
                run(["train", "ppo", *TINY, *d], timeout=180)]
    finally:
        holder.send_signal(signal.SIGCONT)
        holder.kill()
        holder.wait()
    return {"rows": rows}


def bad_values(base: Path, good: str) -> dict:
    store = base / "bad"
    store.mkdir()
    shutil.copytree(base / "main" / good, store / good, ignore=shutil.ignore_patterns("checkpoints"))
    copy_run(store, good, "huge-budget", total_steps_per_seed=1e30)
    copy_run(store, good, "string-seeds", seeds="many", status="finished")
    copy_run(store, good, "odd-status", status="paused")
    d = ["--runs-dir", str(store)]
    return {"rows": [run(["runs", *d, "ls"]), run(["runs", *d, "sql", "select count(*) from runs"]),
                     run(["train", "ppo", "--total-steps", "1e30", "--no-progress", *d]),
                     run(["train", "ppo", "--total-steps", "1e12", "--no-progress", *d])]}


def wrong_shape(base: Path, good: str) -> dict:
    store = base / "shapes"
    store.mkdir()
    shutil.copytree(base / "main" / good, store / good, ignore=shutil.ignore_patterns("checkpoints"))
    cases = {"as-list": "[1, 2]", "empty-object": "{}",
             "wrong-types": json.dumps({"run_id": 5, "algo": ["ppo"], "env": None, "seeds": "x",
                                        "status": 3, "config": "no", "final_eval_return": "high"})}
    for name, text in cases.items():
        copy_run(store, good, name)
        (store / name / "run.json").write_text(text)
    copy_run(store, good, "json-is-a-folder")
    (store / "json-is-a-folder" / "run.json").unlink()
    (store / "json-is-a-folder" / "run.json").mkdir()
    d = ["--runs-dir", str(store)]
    rows = [run(["runs", *d, "ls"]), run(["runs", *d, "check"])]
    for name in [*cases, "json-is-a-folder"]:
        rows += [run(["runs", *d, "show", name]), run(["compare", name, good, *d]),
                 run(["resume", name, *d]),
                 run(["render", name, "--out", str(base / f"{name}.gif"), *d])]
    return {"rows": rows, "after": listed(store)}


def concurrent_resumes(base: Path) -> dict:
    store = base / "race"
    store.mkdir()
    run_id = train_run(store, "--checkpoint-every", "1", "--max-chunk-updates", "4",
                       "--total-steps", "8192", kill_after_chunk=2)
    before = len(list((store / run_id / "metrics").glob("chunk-*.parquet")))
    cmd = [*CLI, "resume", run_id, "--runs-dir", str(store), "--no-progress"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    rows = [{"command": "jaxrl " + " ".join(cmd[3:]), "exit": p.returncode,
             "stderr_lines": len([x for x in err.splitlines() if x.strip()]),
             "first_line": next((x for x in err.splitlines() if x.strip()), "")[:160]}
            for p, (_, err) in zip(procs, outs)]
    meta = json.loads((store / run_id / "run.json").read_text())
    after = len(list((store / run_id / "metrics").glob("chunk-*.parquet")))
    return {"rows": rows, "chunks_before": before, "chunks_after": after,
            "status_after": meta.get("status")}


def path_ids(base: Path, good: str) -> dict:
    store, other = base / "main", base / "other"
    other.mkdir()
    shutil.copytree(store / good, other / "outside-run", ignore=shutil.ignore_patterns("checkpoints"))
    d = ["--runs-dir", str(store)]
    rows = []
    for rid in ("../other/outside-run", str(other / "outside-run")):
        rows += [run(["runs", *d, "show", rid]), run(["demos", rid, "--episodes", "1", *d]),
                 run(["render", rid, "--out", str(base / "x.gif"), *d]),
                 run(["export", "tensorboard", rid, "--out", str(base / "tb"), *d]),
                 run(["compare", rid, good, *d]), run(["resume", rid, *d])]
    copy_run(store, good, "2*")
    query = "select run_id, count(*) as n from metrics group by 1 order by 1"
    rows.append(run(["runs", *d, "sql", query]))
    counts = subprocess.run([*CLI, "runs", *d, "sql", query], capture_output=True, text=True,
                            check=False).stdout
    api = subprocess.run([sys.executable, "-c", (
        "import jaxrl\n"
        f"jaxrl.train('ppo', seeds=1, total_steps=2048, runs_dir={str(store)!r}, progress=False,"
        " meta={'run_id': '../evil'}, num_envs=4, num_steps=16)")],
        capture_output=True, text=True, check=False)
    lines = [x for x in api.stderr.splitlines() if x.strip()]
    rows.append({"command": "jaxrl.train(..., meta={'run_id': '../evil'})",
                 "exit": api.returncode, "stderr_lines": len(lines),
                 "first_line": lines[-1][:160] if lines else ""})
    return {"rows": rows, "glob_folder_counts": counts, "evil_exists": (base / "evil").exists()}


def bounded_queries(base: Path) -> dict:
    store = base / "race"  # one sound run: no warning of another case's in the output
    d = ["--runs-dir", str(store)]
    big = "SELECT * FROM range(10000000000)"
    rows = [run(["runs", *d, "sql", big], timeout=300)]
    proc = subprocess.Popen([*CLI, "runs", *d, "sql", "SELECT sum(a.range * b.range) FROM "
                             "range(1000000) a, range(1000000) b"],  # about 10 min unbounded
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(8)  # SIGINT as in a terminal, even when this harness runs in the background
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    lines = [x for x in err.splitlines() if x.strip()]
    rows.append({"command": "jaxrl runs sql <long query>, then Ctrl-C", "exit": proc.returncode,
                 "stderr_lines": len(lines), "first_line": lines[0][:160] if lines else ""})
    api = subprocess.run([sys.executable, "-c", (
        "from jaxrl.runs import query; from jaxrl.runs.store import RunStore\n"
        f"query.sql('SELECT 1 ' + ' ' * 10_000_000, RunStore({str(store)!r}))")],
        capture_output=True, text=True, check=False)
    tail = [x for x in api.stderr.splitlines() if x.strip()]
    rows.append({"command": "query.sql(<a 10 MB query>)", "exit": api.returncode,
                 "stderr_lines": len(tail), "first_line": tail[-1][:160] if tail else ""})
    return {"rows": rows}


def smaller(base: Path) -> dict:
    cfg = base / "dup.yaml"
    cfg.write_text("learning_rate: 0.001\nlearning_rate: 0.1\n")
    d = ["--runs-dir", str(base / "main")]
    return {"rows": [run(["train", "ppo", "--config", str(cfg), "--no-progress", *d]),
                     run(["train", "ppo", "--env", "NoSuchEnv-v9", "--no-progress", *d]),
                     run(["train", "ppo", "--env", "brax:nosuchbody", "--no-progress", *d])]}


def markdown(results: dict) -> str:
    out = ["# The run store under faults and hostile input", "",
           "`python experiments/store_faults.py` (one line per command: exit status, stderr "
           "lines, the first of them).", ""]
    for case, res in results.items():
        out += [f"## {case}", ""]
        if "skipped" in res:
            out += [f"skipped: {res['skipped']}", ""]
            continue
        out += ["| command | exit | stderr lines | first stderr line | s |", "|---|---|---|---|---|"]
        for r in res["rows"]:
            cmd = r["command"].replace("|", "\\|")
            first = r["first_line"].replace("|", "\\|")
            out.append(f"| `{cmd[:110]}` | {r['exit']} | {r['stderr_lines']} | {first} | "
                       f"{r.get('seconds', '')} |")
        extra = {k: v for k, v in res.items() if k != "rows"}
        if extra:
            out += ["", "```", json.dumps(extra, indent=1), "```"]
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="folder for results.json and report.md")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="jaxrl-faults-"))
    (base / "main").mkdir()
    good = train_run(base / "main")
    results = {}
    for name, case in [("read-only store", lambda: read_only(base, good)),
                       ("full disk", lambda: full_disk(base, good)),
                       ("stuck lock holder", lambda: stuck_lock(base)),
                       ("bad values", lambda: bad_values(base, good)),
                       ("run.json of the wrong shape", lambda: wrong_shape(base, good)),
                       ("two resumes at once", lambda: concurrent_resumes(base)),
                       ("run ids that are paths", lambda: path_ids(base, good)),
                       ("unbounded queries", lambda: bounded_queries(base)),
                       ("smaller ones", lambda: smaller(base))]:
        print(f"-- {name}", flush=True)
        try:
            results[name] = case()
        except Exception as err:  # one case's harness failing must not hide the others
            results[name] = {"rows": [], "harness_error": f"{type(err).__name__}: {err}"}
    results["runs ls afterwards"] = {"rows": [], **{name: listed(base / name) for name in
                                                    ("main", "bad", "shapes", "race", "other")}}
    text = markdown(results)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(results, indent=1))
        (out / "report.md").write_text(text)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
