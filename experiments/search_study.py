"""Searches and populations against the usual ways, measured (issue 78, item 3).

    .venv/bin/python experiments/search_study.py search        # CartPole-v1 PPO: TPE search,
                                                               # separate processes, grid, winner
    .venv/bin/python experiments/search_study.py pbt           # Pendulum-v1 PPO: PBT vs a grid
    .venv/bin/python experiments/search_study.py pbt --pbt-env gymnax:Breakout-MinAtar ...
    .venv/bin/python experiments/search_study.py pruned ...    # Breakout-MinAtar PPO: pruned TPE
    .venv/bin/python experiments/search_study.py stopped --runs-dir DIR  # a stopped attempt
    .venv/bin/python experiments/search_study.py summary       # the derived numbers
    .venv/bin/python experiments/search_study.py figure        # search.png, pbt*.png

benchmarks/search-cpu/NOTES.md lists the exact arguments of each committed part. Each part
writes its key of ``benchmarks/search-<device>/results.json`` (re-read just before writing, so
parts may run side by side; ``--key`` names another). Every timing carries the machine's load
average (`os.getloadavg`, before and after) and the compile counts of the part's programs
(`jaxrl.engine.programs.COMPILED`, by program: init, chunk, eval, ...; a program loaded from
the persistent compilation cache counts as compiled, one held by this process does not).

- ``search``: a 64-trial TPE search (`jaxrl.search`, batches of 16 trials x 4 seeds, each batch
  one program), driven one batch at a time (a resume that raises ``trials``), so each batch's
  wall time and compile count is its own; a few of its trials, drawn at random, timed as
  separate ``jaxrl train`` processes (the whole extrapolated from their median, and said so);
  a 64-point grid as one `jaxrl.sweep` program; the search's and the grid's winners re-run on
  8 fresh seeds (root seed 1000; the search used root seed 0).
- ``pbt``: PBT (`jaxrl.pbt`, 8 slots x 8 seeds in one program) against a grid of 8 fixed
  configs x 8 seeds, the same env steps; the grid's best config re-run on 8 fresh seeds.
- ``pruned``: a TPE search with successive halving (``prune``): slots refilled in the same
  program; its winner re-run on fresh seeds at the program's full budget (``--fresh 0``: not;
  ``--resume-search ID --runs-dir DIR``: read an ended search back instead of running one).
- ``stopped``: what a search stopped by hand had done (its chunks' end times, its pace).

The objective of a search (and the grid's ranking) is the IQM over seeds of the final
evaluation return (`jaxrl.stats.iqm`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

CARTPOLE_SPACE = {"learning_rate": "loguniform(1e-4, 3e-3)", "ent_coef": "uniform(0, 0.05)",
                  "clip_eps": "uniform(0.1, 0.3)", "gae_lambda": "uniform(0.8, 0.99)"}
# 4 x 4 x 4 over three of the space's four fields, each range's ends included; ent_coef stays at
# PPO's default 0.01 (inside its range)
CARTPOLE_GRID = {"learning_rate": [1e-4, 3.1e-4, 9.7e-4, 3e-3],
                 "clip_eps": [0.1, 0.167, 0.233, 0.3],
                 "gae_lambda": [0.8, 0.863, 0.927, 0.99]}
PENDULUM_SPACE = {"learning_rate": "loguniform(1e-4, 3e-3)", "clip_eps": "uniform(0.1, 0.3)",
                  "gae_lambda": "uniform(0.8, 0.99)"}
PENDULUM_GRID = {"learning_rate": [1e-4, 3.1e-4, 9.7e-4, 3e-3], "gae_lambda": [0.9, 0.95]}
BREAKOUT_SPACE = {"learning_rate": "loguniform(1e-4, 3e-3)", "ent_coef": "uniform(0, 0.05)",
                  "clip_eps": "uniform(0.1, 0.3)", "gae_lambda": "uniform(0.8, 0.99)"}
BREAKOUT_GRID = {"learning_rate": [1e-4, 3.1e-4, 9.7e-4, 3e-3], "ent_coef": [0.0, 0.01]}
PBT_SPACES = {"Pendulum-v1": (PENDULUM_SPACE, PENDULUM_GRID),
              "gymnax:Breakout-MinAtar": (BREAKOUT_SPACE, BREAKOUT_GRID)}
FRESH_SEED = 1000  # root seed of every re-run on fresh seeds (the studies use root seed 0)


def load() -> tuple[float, float, float]:
    return tuple(round(x, 2) for x in os.getloadavg())


class Stage:
    """Times a block: wall seconds, load average before and after, programs compiled by tag."""

    def __enter__(self):
        from jaxrl.engine import programs
        self._compiled = dict(programs.COMPILED)
        self.load_before = load()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        from jaxrl.engine import programs
        self.seconds = time.perf_counter() - self._start
        self.load_after = load()
        self.compiles = {k: v - self._compiled.get(k, 0) for k, v in programs.COMPILED.items()
                         if v - self._compiled.get(k, 0)}
        return False

    def record(self) -> dict:
        return {"wall_seconds": round(self.seconds, 1), "compiles": self.compiles,
                "loadavg_before": self.load_before, "loadavg_after": self.load_after}


def iqm(values) -> float:
    from jaxrl import stats
    return round(float(stats.iqm(np.asarray(values, dtype=np.float64))), 2)


def floats(values) -> list[float]:
    return [round(float(v), 2) for v in np.asarray(values).reshape(-1)]


def fresh_seeds(algo: str, env: str, config: dict, seeds: int, total_steps: int,
                **options) -> dict:
    """``config`` trained anew on ``seeds`` seeds of root seed `FRESH_SEED`: its per-seed final
    evaluation returns and their IQM, timed."""
    import jaxrl
    with Stage() as stage:
        result = jaxrl.train(algo, env, seeds=seeds, total_steps=total_steps, seed=FRESH_SEED,
                             progress=False, store=False, **options, **config)
    values = floats(result.final_eval_return)
    return {"config": config, "root_seed": FRESH_SEED, "seeds": seeds,
            "total_steps": total_steps, "final_eval_return": values, "iqm": iqm(values),
            "mean": round(float(np.mean(values)), 2), **stage.record()}


def jaxrl_cli() -> str:
    return str(Path(sys.executable).with_name("jaxrl"))


def separate_processes(algo: str, env: str, configs: list[dict], seeds: int, total_steps: int,
                       runs_dir: str) -> list[dict]:
    """Each config as its own ``jaxrl train`` process (as a user's trial runs), timed from the
    process's start to its exit; its compile and run seconds from its ``--json``."""
    out = []
    for i, config in enumerate(configs):
        sets = [x for k, v in config.items() for x in ("--set", f"{k}={v}")]
        report = Path(runs_dir) / f"separate-{i}.json"
        cmd = [jaxrl_cli(), "train", algo, "--env", env, "--seeds", str(seeds),
               "--total-steps", str(total_steps), "--runs-dir", runs_dir, "--no-progress",
               "--json", str(report), *sets]
        before = load()
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        seconds = time.perf_counter() - start
        got = json.loads(report.read_text())
        out.append({"config": config, "command": " ".join(cmd[1:]).replace(runs_dir, "RUNS"),
                    "wall_seconds": round(seconds, 1), "loadavg_before": before,
                    "loadavg_after": load(), "final_eval_return": floats(
                        got.get("final_eval_return", [])),
                    **{k: got[k] for k in ("compile_seconds", "run_seconds", "compile_source")
                       if k in got}})
    return out


def trial_rows(table, space) -> list[dict]:
    keep = ["trial", "batch", *space, "value", "state", *(c for c in ("slot", "budget")
                                                           if c in table.columns)]
    rows = table[[c for c in keep if c in table.columns]].to_dict("records")
    return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
            for r in rows]


def grid_rows(table, grid) -> list[dict]:
    """A sweep's table as rows of its grid values, IQM and mean, in config order."""
    rows = table.sort_values("config")[["config", *grid, "iqm", "mean"]].to_dict("records")
    return [{k: (int(v) if k == "config" else round(float(v), 6)) for k, v in r.items()}
            for r in rows]


def part_search(args) -> dict:
    """CartPole-v1 PPO: the TPE search, separate processes, the grid, the winners re-run."""
    import jaxrl
    algo, env, seeds, steps = "ppo", args.env, args.seeds, args.total_steps
    runs = tempfile.mkdtemp(prefix="search-study-")
    common = dict(seeds=seeds, total_steps=steps, progress=False, runs_dir=runs)
    batches, search_id = [], None
    with Stage() as whole:
        for b in range(args.trials // args.batch):
            with Stage() as stage:
                found = jaxrl.search(algo, env, space=CARTPOLE_SPACE,
                                     trials=args.batch * (b + 1), batch=args.batch,
                                     resume=search_id, **common)
            search_id = found.search_id
            batches.append({"batch": b, "best_value_so_far": round(found.best_value, 2),
                            **stage.record()})
            print(f"search batch {b}: {stage.seconds:.0f} s, compiles {stage.compiles}, "
                  f"best {found.best_value:.1f}", flush=True)
    search = {"wall_seconds": round(whole.seconds, 1), "compiles": whole.compiles,
              "loadavg_before": whole.load_before, "loadavg_after": whole.load_after,
              "sampler": "tpe (multivariate, constant liar; seeded per batch)",
              "batches": batches, "best": found.best, "best_value": round(found.best_value, 2),
              "trials_at_500": int((found.table["value"] >= 500).sum()),
              "table": trial_rows(found.table, CARTPOLE_SPACE)}

    rng = np.random.default_rng(0)
    picked = sorted(rng.choice(args.trials, size=args.separate, replace=False).tolist())
    sample = [{k: float(v) for k, v in r.items()} for r in
              found.table.set_index("trial").loc[picked, list(CARTPOLE_SPACE)]
              .to_dict("records")]
    timed = separate_processes(algo, env, sample, seeds, steps, runs)
    median = float(np.median([t["wall_seconds"] for t in timed]))
    separate = {"trials_timed": picked, "timed": timed,
                "median_seconds_per_trial": round(median, 1),
                "extrapolated_seconds_for_all_trials": round(median * args.trials, 1),
                "note": f"{len(timed)} of the {args.trials} trials (drawn at random) run as "
                        f"separate `jaxrl train` processes one after another, persistent "
                        f"compilation cache on; the total is their median times "
                        f"{args.trials}: an extrapolation, not measured"}
    print(f"separate: median {median:.1f} s a trial", flush=True)

    with Stage() as stage:
        swept = jaxrl.sweep(algo, env, grid=CARTPOLE_GRID, keep_results=False, **common)
    table = swept.table.sort_values("iqm", ascending=False)
    grid_best = {k: float(v) for k, v in table.iloc[0][list(CARTPOLE_GRID)].items()}
    grid = {"grid": CARTPOLE_GRID, "fixed": {"ent_coef": 0.01}, "configs": len(swept.table),
            "best": grid_best, "best_value": round(float(table.iloc[0]["iqm"]), 2),
            "configs_at_500": int((swept.table["iqm"] >= 500).sum()),
            "values": floats(swept.table.sort_values("config")["iqm"]),
            "table": grid_rows(swept.table, CARTPOLE_GRID), **stage.record()}
    print(f"grid: {stage.seconds:.0f} s, compiles {stage.compiles}, best "
          f"{grid['best_value']}", flush=True)

    return {"what": "PPO, a 64-trial TPE search beside separate processes and a 64-point grid",
            "algo": algo, "env": env, "total_steps_per_seed": steps, "seeds": seeds,
            "trials": args.trials, "batch": args.batch, "space": CARTPOLE_SPACE,
            "objective": "IQM over the trial's seeds of the final evaluation return "
                         "(greedy, the engine's default evaluation episodes)",
            "search": search, "separate_processes": separate, "grid": grid,
            "search_winner_fresh": fresh_seeds(algo, env, found.best, args.fresh, steps),
            "grid_winner_fresh": fresh_seeds(algo, env, grid_best, args.fresh, steps)}


def part_pbt(args) -> dict:
    """PPO on Pendulum-v1 (or ``--pbt-env``): PBT of 8 slots x 8 seeds beside a grid of 8
    fixed configs x 8 seeds, the same env steps."""
    import jaxrl
    from jaxrl.studies.pbt.schedule import Rule
    algo, env, steps = "ppo", args.pbt_env, args.total_steps
    space, grid_space = PBT_SPACES[env]
    runs = tempfile.mkdtemp(prefix="pbt-study-")
    fixed = {k: v for k, v in (("num_envs", args.num_envs),
                               ("hidden", tuple(args.hidden) if args.hidden else None),
                               ("torso", args.torso)) if v}
    options = dict(max_chunk_updates=args.chunk_updates, **fixed)
    rule = Rule(interval=1, fraction=0.25, perturb=(0.8, 1.2), resample_probability=0.25,
                window=args.chunk_updates)
    with Stage() as stage:
        out = jaxrl.pbt(algo, env, space=space, population=args.population,
                        seeds=args.seeds, total_steps=steps, rule=rule, runs_dir=runs,
                        progress=False, **options)
    members = np.stack([np.asarray(r.final_eval_return) for r in out.results])  # [P, S]
    delivered = out.final["final_eval_return"].to_numpy()
    from jaxrl.studies.pbt import store as pbt_store
    stored = json.loads((pbt_store.pbt_dir(runs, out.pbt_id) / pbt_store.REQUEST).read_text())
    chunks = sorted(out.lineage, key=int)
    schedule = {c: {n: [[round(x, 6) for x in row] for row in v]
                    for n, v in out.lineage[c]["hparams"].items()} for c in chunks}
    pbt = {"population": args.population, "seeds": args.seeds, "rule": vars(rule) | {
               "perturb": list(rule.perturb)},
           "space": space, "exploits": len(chunks),
           "delivered": {"what": "per seed (one independent population each), the slot with "
                                 "the best training return over the last chunk and its final "
                                 "evaluation return",
                         "slot": out.final["slot"].tolist(),
                         "final_eval_return": floats(delivered), "iqm": iqm(delivered)},
           "all_members": {"what": "every slot x seed's final evaluation return [slot][seed]",
                           "final_eval_return": [floats(m) for m in members],
                           "iqm": iqm(members)},
           "per_slot_iqm": [iqm(m) for m in members],
           "initial_configs": stored["configs"],
           "schedule": {"what": "after each exploit (key: the chunk it followed), each "
                                "hyperparameter [slot][seed]", "hparams": schedule},
           **stage.record()}
    print(f"pbt: {stage.seconds:.0f} s, compiles {stage.compiles}, delivered IQM "
          f"{pbt['delivered']['iqm']}", flush=True)

    with Stage() as stage:
        swept = jaxrl.sweep(algo, env, grid=grid_space, seeds=args.seeds, total_steps=steps,
                            progress=False, runs_dir=runs, keep_results=False, **options)
    table = swept.table.sort_values("iqm", ascending=False)
    best = {k: float(v) for k, v in table.iloc[0][list(grid_space)].items()}
    grid = {"grid": grid_space, "fixed": {k: v for k, v in {"clip_eps": 0.2, "gae_lambda": 0.95,
                                                           "ent_coef": "default"}.items()
                                          if k not in grid_space}, "seeds": args.seeds,
            "configs": len(swept.table), "best": best,
            "best_value": round(float(table.iloc[0]["iqm"]), 2),
            "values": floats(swept.table.sort_values("config")["iqm"]),
            "table": grid_rows(swept.table, grid_space), **stage.record()}
    print(f"grid: {stage.seconds:.0f} s, compiles {stage.compiles}, best "
          f"{grid['best_value']}", flush=True)
    return {"what": "PPO, population-based training beside a grid of the same compute",
            "algo": algo, "env": env, "total_steps_per_seed": steps,
            "max_chunk_updates": args.chunk_updates, "fixed": fixed,
            "why_ppo": "SAC runs one update per env step on one env a seed (1.0k-1.3k "
                       "env-steps/s for 8 seeds on this CPU, benchmarks/classic-cpu): 64 "
                       "members at a useful budget do not fit the time; PPO's learning "
                       "rate, clip range and lambda are traced, so PBT can change them"
                       if env == "Pendulum-v1" else "the issue asks for PPO here",
            "same_compute": f"PBT: {args.population} slots x {args.seeds} seeds x {steps} "
                            f"env steps; grid: {len(swept.table)} configs x {args.seeds} seeds "
                            f"x {steps} env steps",
            "pbt": pbt, "grid": grid,
            "grid_winner_fresh": fresh_seeds(algo, env, best, args.fresh, steps, **options)}


def part_pruned(args) -> dict:
    """Breakout-MinAtar PPO: a pruned TPE search, its winner re-run on fresh seeds."""
    import jaxrl
    algo, env, steps = "ppo", args.pruned_env, args.total_steps
    runs = args.runs_dir or tempfile.mkdtemp(prefix="pruned-study-")
    fixed = {k: v for k, v in (("num_envs", args.num_envs),
                               ("hidden", tuple(args.hidden) if args.hidden else None),
                               ("torso", args.torso)) if v}
    prune = {"rung": args.rung, "eta": args.eta, "window": args.window}
    with Stage() as stage:
        found = jaxrl.search(algo, env, space=BREAKOUT_SPACE, trials=args.trials,
                             batch=args.batch, seeds=args.seeds, total_steps=steps,
                             progress=False, runs_dir=runs, prune=prune,
                             max_chunk_updates=args.chunk_updates,
                             resume=args.resume_search, **fixed)
    timing = stage.record()
    if args.resume_search:  # an ended search read back: its wall time is its runs'
        timing = {"wall_seconds_from_runs": stored_wall_seconds(runs, found.search_id),
                  "note": "read back from its store after the process that ran it was "
                          "stopped during the winner's re-run; wall time from the slot runs' "
                          "started_at to their last ended_at (compile included)",
                  "compiles_of_read_back": stage.compiles}
    table = found.table
    print(f"pruned search: {stage.seconds:.0f} s, compiles {stage.compiles}, best "
          f"{found.best_value:.2f}", flush=True)
    search = {"trials": args.trials, "batch": args.batch, "seeds": args.seeds,
              "prune": prune, "space": BREAKOUT_SPACE, "fixed": fixed,
              "max_chunk_updates": args.chunk_updates,
              "states": table["state"].value_counts().to_dict(),
              "best": found.best, "best_value": round(found.best_value, 2),
              "trials_asked": len(table), "batches_run": int(table["batch"].nunique()),
              "best_budget_steps_per_seed": int(table.iloc[0]["budget"])
              if "budget" in table else None,
              "env_steps_trained_per_seed": int(table["budget"].fillna(0).sum())
              if "budget" in table else None,
              "table": trial_rows(table, BREAKOUT_SPACE), **timing}
    return {"what": "PPO, a pruned TPE search (successive halving, slots refilled in the "
                    "same program)", "algo": algo, "env": env,
            "total_steps_per_seed": steps, "search": search,
            "note": "a trial's budget is what its slot trained since the trial took it; a "
                    "trial never pruned trains to the program's end, so the trials' budgets "
                    "differ; the winner is re-run on fresh seeds at the program's full budget",
            "winner_fresh": fresh_seeds(algo, env, found.best, args.fresh, steps,
                                        max_chunk_updates=args.chunk_updates, **fixed)
            if args.fresh else {"not_run": "no time left on the shared machine"}}


def stored_wall_seconds(runs: str, search_id: str) -> float:
    """From the first slot run's start to the last one's end, in seconds."""
    from datetime import datetime
    starts, ends = [], []
    for path in Path(runs).glob("*/run.json"):
        meta = json.loads(path.read_text())
        if meta.get("search_id") == search_id and meta.get("ended_at"):
            starts.append(datetime.fromisoformat(meta["started_at"]))
            ends.append(datetime.fromisoformat(meta["ended_at"]))
    return round((max(ends) - min(starts)).total_seconds(), 1)


def part_stopped(args) -> dict:
    """A pruned search stopped before its end (``--runs-dir``): its request and when each
    chunk's metrics were written (the last slot's file), to say what it would have taken."""
    from datetime import UTC, datetime
    runs = Path(args.runs_dir)
    request = json.loads(next(runs.glob("searches/*/search.json")).read_text())
    started = min(json.loads(p.read_text())["started_at"] for p in runs.glob("*/run.json"))
    t0 = datetime.fromisoformat(started).timestamp()
    ends: dict[int, float] = {}
    for f in runs.glob("*/metrics/chunk-*.parquet"):
        chunk = int(f.stem.split("-")[1])
        ends[chunk] = max(ends.get(chunk, 0.0), f.stat().st_mtime)
    done = [round(ends[c] - t0, 1) for c in sorted(ends)]
    gaps = np.diff(done).tolist()
    fixed = request["fixed"]  # PPO's num_steps at its default 128, the MLP at MinAtar's (256, 256)
    per_chunk = (request["batch"] * request["seeds"] * fixed["max_chunk_updates"]
                 * fixed["num_envs"] * 128)
    chunks = request["total_steps"] // (fixed["max_chunk_updates"] * fixed["num_envs"] * 128)
    return {"request": request, "started_at": started,
            "stopped_at": datetime.fromtimestamp(max(ends.values()), UTC).isoformat(),
            "chunks_done": len(done), "seconds_to_each_chunk_end": done,
            "seconds_between_chunk_ends": [round(g, 1) for g in gaps],
            "env_steps_per_chunk": per_chunk,
            "chunks_in_program": chunks,
            "estimated_seconds_for_first_program": round(
                done[0] + (chunks - 1) * float(np.median(gaps)), 1),
            "env_steps_per_second_between_chunk_ends": [round(per_chunk / g) for g in gaps],
            "note": "stopped by hand (its pace on the shared machine would not fit the time); "
                    "its trials were never told, so it has no result"}


def part_throughput(args) -> dict:
    """One plain run's env-steps/s (compile apart), to size a study before running it."""
    import jaxrl
    with Stage() as stage:
        result = jaxrl.train("ppo", args.env, seeds=args.seeds, total_steps=args.total_steps,
                             progress=False, store=False)
    return {"algo": "ppo", "env": args.env, "seeds": args.seeds,
            "total_steps_per_seed": args.total_steps,
            "env_steps_per_second": round(float(result.env_steps_per_second)),
            "compile_seconds": round(float(result.compile_seconds), 1),
            "run_seconds": round(float(result.run_seconds), 1),
            "final_eval_return": floats(result.final_eval_return), **stage.record()}


def figure(results: dict, path: Path) -> None:
    """CartPole: the wall time of each way (the separate processes extrapolated, hatched) and
    the 64 trials' scores of the search beside the grid's."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s = results["cartpole_search"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    left = 0.0
    for x in s["search"]["batches"]:
        a.barh(2, x["wall_seconds"], left=left, color="C0", edgecolor="white")
        left += x["wall_seconds"]
    a.barh(1, s["grid"]["wall_seconds"], color="C1")
    sep = s["separate_processes"]
    a.barh(0, sep["extrapolated_seconds_for_all_trials"], color="C2", hatch="//", alpha=0.6)
    a.set_yticks([2, 1, 0], ["TPE search\n4 programs of 16 trials", "4x4x4 grid\none program",
                             "64 separate processes\n(4 timed, extrapolated)"], fontsize=8)
    for y, v in ((2, s["search"]["wall_seconds"]), (1, s["grid"]["wall_seconds"]),
                 (0, sep["extrapolated_seconds_for_all_trials"])):
        a.text(v, y, f" {v:.0f} s", va="center", fontsize=8)
    a.set_xlim(0, sep["extrapolated_seconds_for_all_trials"] * 1.15)
    a.set_xlabel("wall seconds (shared 2-core CPU, load average 5-10)")
    a.set_title(f"{s['env']} PPO, 64 trials of {s['total_steps_per_seed'] // 1000}k steps x "
                f"{s['seeds']} seeds")
    vals = [r["value"] for r in s["search"]["table"] if r["value"] is not None]
    b.hist([vals, s["grid"]["values"]], bins=np.linspace(0, 500, 21),
           label=[f"TPE trials ({s['search']['trials_at_500']} at 500)",
                  f"grid points ({s['grid']['configs_at_500']} at 500)"])
    b.set_xlabel("trial's IQM over its 4 seeds of the final evaluation")
    b.set_ylabel("trials")
    b.legend(fontsize=8, loc="upper left")
    b.set_title("the 64 trials' scores")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure_pbt(results: dict, key: str, path: Path) -> None:
    """PBT's learning-rate schedules (one population) and the final scores beside the grid's."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r = results[key]
    pbt, grid = r["pbt"], r["grid"]
    chunks = sorted(pbt["schedule"]["hparams"], key=int)
    lr0 = [c["learning_rate"] for c in pbt["initial_configs"]]
    lr = np.array([[lr0[i] for i in range(len(lr0))]]
                  + [[row[0] for row in pbt["schedule"]["hparams"][c]["learning_rate"]]
                     for c in chunks])  # [exploits + 1, slots], seed 0's population
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    steps = r["total_steps_per_seed"] / (len(chunks) + 1)  # one chunk
    lr = np.vstack([lr, lr[-1:]])  # the last chunk runs to the end
    x = np.arange(len(chunks) + 2) * steps / 1000
    for i in range(lr.shape[1]):
        a.step(x, lr[:, i], where="post", lw=1.2)
    a.set_yscale("log")
    a.set_xlabel("env steps per member (k)")
    a.set_ylabel("learning rate (each line a slot)")
    a.set_title(f"PBT's schedules, population of seed 0 ({pbt['exploits']} exploits)")
    members = np.asarray(pbt["all_members"]["final_eval_return"]).reshape(-1).tolist()
    groups = [("PBT: delivered\nmember per seed", pbt["delivered"]["final_eval_return"]),
              (f"PBT: all\n{len(members)} members", members),
              ("grid: 8 configs'\nIQM over 8 seeds", [row["iqm"] for row in grid["table"]]),
              ("grid winner:\n8 fresh seeds", r["grid_winner_fresh"]["final_eval_return"])]
    for i, (_, vals) in enumerate(groups):
        jitter = np.random.default_rng(i).uniform(-0.15, 0.15, len(vals))
        b.scatter(i + jitter, vals, s=14, alpha=0.7)
    b.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
    b.set_ylabel("final evaluation return")
    b.set_title(f"{r['env']} PPO, {r['total_steps_per_seed'] // 1000}k steps a member")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary(results: dict) -> dict:
    """The derived numbers the notes quote (means, shares, ratios), from the parts' records."""
    from jaxrl import stats
    out = {}
    if "cartpole_search" in results:
        c = results["cartpole_search"]
        search, grid, sep = c["search"], c["grid"], c["separate_processes"]
        late = [b["wall_seconds"] for b in search["batches"][1:]]
        first = search["batches"][0]["wall_seconds"]
        out["cartpole_search"] = {
            "search_seconds_per_trial": round(search["wall_seconds"] / c["trials"], 2),
            "search_seconds_per_trial_by_batch": [round(b["wall_seconds"] / c["batch"], 2)
                                                  for b in search["batches"]],
            "search_seconds_per_trial_after_first_batch": round(
                sum(late) / (c["trials"] - c["batch"]), 2),
            "first_batch_minus_median_later_batch_seconds": round(
                first - float(np.median(late)), 1),
            "grid_seconds_per_trial": round(grid["wall_seconds"] / grid["configs"], 2),
            "separate_over_search_wall": round(
                sep["extrapolated_seconds_for_all_trials"] / search["wall_seconds"], 2),
            "separate_over_grid_wall": round(
                sep["extrapolated_seconds_for_all_trials"] / grid["wall_seconds"], 2),
            "separate_compile_seconds": [round(t["compile_seconds"], 1) for t in sep["timed"]],
            "separate_run_seconds": [round(t["run_seconds"], 1) for t in sep["timed"]],
            "separate_other_seconds": [round(t["wall_seconds"] - t["compile_seconds"]
                                             - t["run_seconds"], 1) for t in sep["timed"]],
            "search_share_at_500": round(search["trials_at_500"] / c["trials"], 3),
            "search_trials_at_500_by_batch": [
                sum(1 for r in search["table"] if r["batch"] == b and (r["value"] or 0) >= 500)
                for b in range(len(search["batches"]))],
            "search_learning_rate_range_by_batch": [
                [round(f(r["learning_rate"] for r in search["table"] if r["batch"] == b), 5)
                 for f in (min, max)] for b in range(len(search["batches"]))],
            "grid_share_at_500": round(grid["configs_at_500"] / grid["configs"], 3),
            **{f"{k}_mean": round(float(np.mean(c[k]["final_eval_return"])), 2)
               for k in ("search_winner_fresh", "grid_winner_fresh")},
            **{f"{k}_seeds_at_500": int(sum(v >= 500 for v in c[k]["final_eval_return"]))
               for k in ("search_winner_fresh", "grid_winner_fresh")}}
    if "pendulum_pbt" in results:
        p = results["pendulum_pbt"]
        out["pendulum_pbt"] = {
            "pbt_delivered_mean": round(float(np.mean(
                p["pbt"]["delivered"]["final_eval_return"])), 2),
            "grid_winner_fresh_mean": round(float(np.mean(
                p["grid_winner_fresh"]["final_eval_return"])), 2),
            "pbt_minus_grid_seconds": round(p["pbt"]["wall_seconds"]
                                            - p["grid"]["wall_seconds"], 1),
            "pbt_delivered_vs_grid_winner_fresh": {
                k: (round(v, 3) if isinstance(v, float) else v) for k, v in stats.compare(
                    p["pbt"]["delivered"]["final_eval_return"],
                    p["grid_winner_fresh"]["final_eval_return"]).items()},
            "pbt_seed_spread_across_slots": [round(float(np.ptp(col)), 2) for col in np.asarray(
                p["pbt"]["all_members"]["final_eval_return"]).T]}
    if "breakout_pbt" in results:
        r = results["breakout_pbt"]
        members = r["pbt"]["population"] * r["pbt"]["seeds"]
        rate = members * r["total_steps_per_seed"] / r["pbt"]["wall_seconds"]
        grid_rate = members * r["total_steps_per_seed"] / r["grid"]["wall_seconds"]
        out["breakout_pbt"] = {
            "pbt_delivered_mean": round(float(np.mean(
                r["pbt"]["delivered"]["final_eval_return"])), 2),
            "grid_winner_fresh_mean": round(float(np.mean(
                r["grid_winner_fresh"]["final_eval_return"])), 2),
            "pbt_delivered_vs_grid_winner_fresh": {
                k: (round(v, 3) if isinstance(v, float) else v) for k, v in stats.compare(
                    r["pbt"]["delivered"]["final_eval_return"],
                    r["grid_winner_fresh"]["final_eval_return"]).items()},
            "pbt_seed_spread_across_slots": [round(float(np.ptp(col)), 2) for col in np.asarray(
                r["pbt"]["all_members"]["final_eval_return"]).T],
            "pbt_env_steps_per_second_with_compile": round(rate),
            "grid_env_steps_per_second": round(grid_rate)}
        stopped = results.get("breakout_pruned_search_stopped_attempt")
        full = 2 * members * 10_000_000  # PBT and its grid at minatar-cpu's 10M a member
        out["breakout_pbt_at_10m_estimate"] = {
            "what": "an extrapolation, not measured: PBT (8 x 8) and its grid (8 x 8) at 10M "
                    "env steps a member, at the rates measured here on this shared CPU",
            "env_steps": full,
            "hours_at_mlp_pbt_rate": round(full / rate / 3600, 1),
            **({"hours_at_cnn_rate": round(full / float(np.median(
                stopped["env_steps_per_second_between_chunk_ends"])) / 3600, 1)}
               if stopped else {})}
    for key in [k for k in results if k.startswith("breakout_pruned_search")
                and "stopped" not in k]:
        b = results[key]
        srch = b["search"]
        steps = srch["env_steps_trained_per_seed"] * srch["seeds"]  # every member's a trial's
        fresh = b["winner_fresh"]
        wall = srch.get("wall_seconds", srch.get("wall_seconds_from_runs"))
        out[key] = {
            "program_env_steps": steps,
            "env_steps_per_second_with_compile": round(steps / wall),
            "unpruned_steps_per_seed": srch["trials"] * b["total_steps_per_seed"],
            "trained_share_of_unpruned": round(srch["env_steps_trained_per_seed"]
                                               / (srch["trials"] * b["total_steps_per_seed"]),
                                               3),
            "completed_budgets_steps_per_seed": sorted(
                r["budget"] for r in srch["table"] if r["state"] == "COMPLETE"),
            "trials_by_state_and_batch": {
                f"{st} batch {bt}": sum(1 for r in srch["table"]
                                        if r["state"] == st and r["batch"] == bt)
                for st in ("COMPLETE", "PRUNED") for bt in range(srch["batches_run"])}}
        if "final_eval_return" in fresh:
            out[key].update({
                "winner_fresh_env_steps_per_second_with_compile": round(
                    fresh["seeds"] * fresh["total_steps"] / fresh["wall_seconds"]),
                "winner_fresh_mean": round(float(np.mean(fresh["final_eval_return"])), 2)})
    return out


PARTS = {"search": ("cartpole_search", part_search), "pbt": ("pendulum_pbt", part_pbt),
         "pruned": ("breakout_pruned_search", part_pruned),
         "throughput": ("throughput", part_throughput),
         "stopped": ("breakout_pruned_search_stopped_attempt", part_stopped)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=[*PARTS, "figure", "summary"])
    ap.add_argument("--env", default="CartPole-v1", help="search and throughput")
    ap.add_argument("--total-steps", type=int, default=None)
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--separate", type=int, default=4, help="trials timed as processes")
    ap.add_argument("--fresh", type=int, default=8, help="fresh seeds of a winner's re-run")
    ap.add_argument("--population", type=int, default=8)
    ap.add_argument("--chunk-updates", type=int, default=10)
    ap.add_argument("--num-envs", type=int, default=None, help="pruned: PPO's num_envs")
    ap.add_argument("--hidden", type=int, nargs="+", default=None, help="pruned: MLP widths")
    ap.add_argument("--torso", default=None, help="pruned: PPO's torso (mlp, minatar_cnn, ..)")
    ap.add_argument("--pruned-env", default="gymnax:Breakout-MinAtar")
    ap.add_argument("--pbt-env", default="Pendulum-v1", choices=list(PBT_SPACES))
    ap.add_argument("--resume-search", default=None, help="pruned: read an ended search back")
    ap.add_argument("--runs-dir", default=None, help="pruned: its run store")
    ap.add_argument("--rung", type=int, default=1)
    ap.add_argument("--eta", type=int, default=3)
    ap.add_argument("--window", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--key", default=None, help="the part's key in results.json")
    args = ap.parse_args(argv)
    defaults = {"search": (100_000, 4), "pbt": (204_800, 8), "pruned": (1_000_000, 2),
                "throughput": (100_000, 4)}.get(args.part, (0, 0))
    args.total_steps = args.total_steps or defaults[0]
    args.seeds = args.seeds or defaults[1]

    import jax
    device = jax.devices()[0].platform
    out = args.out or ROOT / f"benchmarks/search-{device}/results.json"
    results = json.loads(out.read_text()) if out.exists() else {}
    if args.part == "figure":
        if "cartpole_search" in results:
            figure(results, out.with_name("search.png"))
        for key, name in (("pendulum_pbt", "pbt.png"), ("breakout_pbt", "pbt-breakout.png")):
            if key in results:
                figure_pbt(results, key, out.with_name(name))
        return 0
    if args.part == "summary":
        results["summary"] = summary(results)
        out.write_text(json.dumps(results, indent=1, default=str) + "\n")
        print(json.dumps(results["summary"], indent=1))
        return 0
    key, run = PARTS[args.part]
    if args.part == "pbt" and args.pbt_env != "Pendulum-v1":
        key = "breakout_pbt"
    key = args.key or key
    record = run(args)
    record.update({"date": time.strftime("%Y-%m-%d %H:%M"), "device": device,
                   "devices": len(jax.devices()), "jax": jax.__version__,
                   "machine": "2-core CPU shared with other benchmarks and test runs "
                              "(see each loadavg)",
                   "command": " ".join(["experiments/search_study.py", *(argv or sys.argv[1:])])})
    results = json.loads(out.read_text()) if out.exists() else {}  # re-read: parts may overlap
    results[key] = record
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(f"wrote {key} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
