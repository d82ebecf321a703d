"""The ``jaxrl`` command line: ``train``, ``sweep``, ``bench``, ``resume``, ``probe``, ``runs``,
``plot``, ``compare``, ``export``, ``demos`` (a stored policy's episodes), ``render`` (a video of
them), ``envs`` (the env names, by family), ``config`` (an algorithm's keys and defaults for an
env), ``ladder`` (the throughput ladder).

Bad input (unknown algorithm or env, unknown or ill-typed ``--set`` key, an out-of-range
hyperparameter, seeds that are not a whole number >= 1, too few steps for one update, an
unwritable ``--json`` file or ``--out`` folder, any argument argparse refuses) exits with status 2
and one line on stderr, before anything compiles.

This module holds the parser; each command lives in the module its ``handler`` names
(`jaxrl.cli.training`: the commands that train; `jaxrl.cli.store`: the commands that read the
run store; `jaxrl.cli.discover`: ``envs`` and ``config``; `jaxrl.cli.video`: ``render``), loaded when that command runs, so
``jaxrl runs ls`` never loads JAX. The help names the algorithms from `jaxrl.cli.names` (plain
tuples), not from the registry, for the same reason.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from jaxrl import compile_cache
from jaxrl.cli.names import ALGO_HELP, ENV_FAMILIES
from jaxrl.cli.parsing import Parser, whole_number


def _add_run_flags(p, seeds: int, seed_help: str) -> None:
    """What `train` and `sweep` share: algorithm, env, budget, overrides, outputs, driver flags."""
    p.add_argument("algo", help=ALGO_HELP)
    p.add_argument("--env", default="CartPole-v1", help="env name (`jaxrl envs` lists them)")
    p.add_argument("--seeds", type=whole_number, default=seeds)
    p.add_argument("--total-steps", type=whole_number, default=100_000,
                   help="env steps per seed (1e6 is fine)")
    p.add_argument("--seed", type=whole_number, default=0, help=seed_help)
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="config override (applied after --config)")
    p.add_argument("--config", metavar="FILE.yaml|PRESET",
                   help="config keys from a YAML mapping (see `jaxrl config ALGO`), or a "
                        "preset by name: ALGO/NAME is presets/ALGO/NAME.yaml "
                        "(ppo/baselines-mujoco, sac/mountaincar-ou)")
    p.add_argument("--env-arg", action="append", metavar="KEY=VALUE",
                   help="env option, a YAML value (reward_scale=1000, observation_indices=[0,2], "
                        "max_frames=400)")
    p.add_argument("--demos", metavar="DEMO_ID",
                   help="the expert's demonstrations, for bc and gail (`jaxrl runs demos` lists "
                        "them; the same as --set demos=DEMO_ID)")
    p.add_argument("--eval-episodes", type=int, default=16)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--runs-dir", default=None, help="run store root (default $JAXRL_RUNS_DIR or ./runs)")
    p.add_argument("--no-store", action="store_true", help="do not record the run")
    _add_driver_flags(p)


def _add_driver_flags(p) -> None:
    p.add_argument("--checkpoint-every", type=int, default=None, metavar="CHUNKS",
                   help="checkpoint every N chunks (orbax, async) so `jaxrl resume` can continue")
    p.add_argument("--max-chunk-updates", type=int, default=50,
                   help="updates per jitted chunk (at most)")
    p.add_argument("--no-shard", action="store_true",
                   help="keep the seed axis on one device (default: split over all local devices)")
    p.add_argument("--no-memory-check", action="store_true",
                   help="skip the device-memory plan made before compiling")


def _add_backend_flags(p) -> None:
    """Where `sweep` groups and `bench` entries run: here, or as tasks on a Ray cluster."""
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (auto, ray://host:10001; default: start a local Ray)")
    p.add_argument("--cpus-per-task", type=float, default=1.0,
                   help="CPUs each Ray task asks for (its JAX CPU device count)")
    p.add_argument("--gpus-per-task", type=float, default=0.0,
                   help="GPUs each Ray task asks for (0.5: two tasks share a GPU)")
    p.add_argument("--checkpoint-dir", default=None, metavar="PATH",
                   help="Ray tasks checkpoint every chunk here (default: in the run store); "
                        "every node must reach it (a shared file system)")


def build_parser() -> argparse.ArgumentParser:
    summary = " ".join(__doc__.split("\n\n")[0].replace("``", "").split())  # first paragraph
    parser = Parser(prog="jaxrl", description=summary)
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train an algorithm on an env over many seeds")
    _add_run_flags(t, seeds=1, seed_help="root seed")
    t.set_defaults(handler=("training", "cmd_train"))

    sw = sub.add_parser("sweep", help="train many configs x seeds; one program per static group")
    _add_run_flags(sw, seeds=8, seed_help="root seed (and random-search seed)")
    sw.add_argument("--grid", action="append", metavar="KEY=V1,V2,...",
                    help="grid values (tuples in brackets: hidden=(64,64),(128,128))")
    sw.add_argument("--random", action="append", metavar="KEY=DIST",
                    help="loguniform(a,b) | uniform(a,b) | randint(a,b) | choice(v1,v2,...)")
    sw.add_argument("--trials", type=int, default=None, help="random draws (default 8)")
    sw.add_argument("--configs-per-group", type=whole_number, default=None, metavar="N",
                    help="at most N configs per program (e.g. 1: one Ray task per config)")
    sw.add_argument("--resume", action="store_true",
                    help="continue the newest stored sweep of this same command: run only its "
                         "groups that are missing or did not finish")
    _add_backend_flags(sw)
    sw.set_defaults(handler=("training", "cmd_sweep"))

    se = sub.add_parser("search", help="search hyperparameters with Optuna's samplers, a batch "
                                       "of trials x seeds trained as one program")
    _add_run_flags(se, seeds=4, seed_help="root seed (the trials' seeds and the sampler's)")
    se.add_argument("--space", metavar="FILE.yaml",
                    help="the search space: config field -> loguniform(a,b) | uniform(a,b) | "
                         "int(a,b) | intlog(a,b) | categorical(v1,v2,...)")
    se.add_argument("--param", action="append", metavar="KEY=DIST",
                    help="one field of the space (added to --space's)")
    se.add_argument("--trials", type=whole_number, default=64)
    se.add_argument("--batch", type=whole_number, default=16,
                    help="trials asked at a time and trained as one sweep")
    se.add_argument("--sampler", choices=("tpe", "cmaes", "random"), default="tpe")
    se.add_argument("--objective", choices=("final_eval_iqm", "final_eval_mean"),
                    default="final_eval_iqm", help="what a trial scores: over its seeds, of "
                                                   "the final evaluation return")
    se.add_argument("--prune", nargs="?", const="", default=None, metavar="rung=N,eta=N",
                    help="successive halving inside each batch's program: every rung (default "
                         "1 chunk, x eta after) the losers are pruned and their slots refilled "
                         "by new trials; settings rung, eta (default 3), window (default 10 "
                         "updates)")
    se.add_argument("--resume", metavar="SEARCH_ID", default=None,
                    help="continue a stored search (the same arguments) where it stopped")
    se.set_defaults(handler=("training", "cmd_search"))

    pb = sub.add_parser("pbt", help="population-based training: a population x seeds in one "
                                    "program, exploited and explored between chunks")
    _add_run_flags(pb, seeds=8, seed_help="root seed (the population's draws and decisions)")
    pb.add_argument("--space", metavar="FILE.yaml",
                    help="traced hyperparameters -> loguniform(a,b) | uniform(a,b)")
    pb.add_argument("--param", action="append", metavar="KEY=DIST",
                    help="one field of the space (added to --space's)")
    pb.add_argument("--population", type=whole_number, default=8)
    pb.add_argument("--interval", type=whole_number, default=2,
                    help="chunks between exploits (--max-chunk-updates sets a chunk)")
    pb.add_argument("--fraction", type=float, default=0.25,
                    help="the bottom fraction copies the top fraction")
    pb.add_argument("--resample-probability", type=float, default=0.25)
    pb.add_argument("--window", type=whole_number, default=10,
                    help="a member's score: its mean training return over this many last updates")
    pb.add_argument("--resume", metavar="PBT_ID", default=None,
                    help="continue a stored, checkpointed population (the same arguments)")
    pb.set_defaults(handler=("training", "cmd_pbt"))

    b = sub.add_parser("bench", help="run a benchmark suite against its published references")
    b.add_argument("suite", help="a suite name (experiments/benchmarks/NAME.yaml) or a YAML path")
    b.add_argument("--only", action="append", metavar="PATTERN",
                   help="only entries whose name (algo/env) matches this glob or substring")
    b.add_argument("--seeds", type=whole_number, default=None,
                   help="seeds per entry (default: the suite's)")
    b.add_argument("--budget-scale", type=float, default=1.0,
                   help="multiply every budget (smoke runs); at least one update per entry")
    b.add_argument("--out", default=None, help="also copy report.md, results.json, curves.png here")
    b.add_argument("--checkpoint-every", type=int, default=None, metavar="CHUNKS",
                   help="checkpoint each entry's run every CHUNKS chunks; a later call resumes "
                        "an interrupted entry from its newest checkpoint")
    b.add_argument("--resume-from", default=None, metavar="PATH",
                   help="the bench's progress in a folder small enough to commit: its runs are "
                        "carried into the run store first (an interrupted entry resumes from "
                        "its checkpoint, on any machine) and the folder is kept up to date")
    b.add_argument("--runs-dir", default=None, help="run store root (default $JAXRL_RUNS_DIR or ./runs)")
    b.add_argument("--json", metavar="PATH")
    b.add_argument("--no-progress", action="store_true")
    _add_backend_flags(b)
    b.set_defaults(handler=("training", "cmd_bench"))

    ld = sub.add_parser("ladder", help="throughput ladder: env-steps/s, compile and peak memory "
                                       "at 1 ... 8,192 members, a peer beside it")
    ld.add_argument("workloads", nargs="*", metavar="PATTERN",
                    help="workload names or globs (default: every workload of the file)")
    ld.add_argument("--file", default="throughput",
                    help="a ladder name (experiments/ladders/NAME.yaml) or a YAML path")
    ld.add_argument("--members", type=whole_number, nargs="+", default=None,
                    help="member counts (default: the file's, 1 to 8192); climbing stops where "
                         "the memory plan refuses a count")
    ld.add_argument("--budget-scale", type=float, default=1.0,
                    help="multiply every workload's steps per member")
    ld.add_argument("--out", default="ladder",
                    help="folder for results.json, report.md, ladder.png; a rerun with the same "
                         "folder measures only the rungs it lacks")
    ld.add_argument("--peer", action="append", choices=("rejax",),
                    help="time this peer's harness (experiments/peers/) at the same counts")
    ld.add_argument("--peer-python", default=None, help="the Python of the peer's own venv")
    ld.add_argument("--timeout", type=float, default=900, help="seconds per rung at most")
    ld.add_argument("--title", default="Throughput ladder")
    ld.add_argument("--no-progress", action="store_true")
    ld.set_defaults(handler=("ladder", "cmd_ladder"))

    rm = sub.add_parser("resume", help="continue an interrupted, checkpointed run (or sweep group)")
    rm.add_argument("run_id")
    rm.add_argument("--runs-dir", default=None)
    rm.add_argument("--json", metavar="PATH")
    rm.add_argument("--no-progress", action="store_true")
    rm.set_defaults(handler=("training", "cmd_resume"))

    r = sub.add_parser("runs", help="query the run store")
    r.add_argument("--runs-dir", default=None)
    rs = r.add_subparsers(dest="runs_command", required=True)
    ls = rs.add_parser("ls")
    ls.add_argument("--algo")
    ls.add_argument("--env")
    ls.add_argument("--status")
    ls.add_argument("--sweep", help="only the runs of this sweep id")
    swq = rs.add_parser("sweep", help="the ranked table of a stored sweep")
    swq.add_argument("sweep_id")
    bq = rs.add_parser("bench", help="rebuild a stored benchmark's report")
    bq.add_argument("bench_id", nargs="?", default=None)
    bq.add_argument("--from-results", metavar="RESULTS_JSON", default=None,
                    help="re-render report.md, results.json and curves.png from a committed "
                         "results.json (no store needed)")
    bq.add_argument("--merge", metavar="RESULTS_JSON", default=None,
                    help="carry the rows of an earlier results.json (its store not kept) for "
                         "entries this store has not run")
    bq.add_argument("--split-evidence", metavar="JSON", action="append", default=[],
                    help="a file recording which seeds of one of the bench's runs fail by what "
                         "their policies do (experiments/posture.py writes one): that "
                         "entry's seeds are reported as split by it (repeatable)")
    bq.add_argument("--out", default=None, help="also copy the report files here")
    show = rs.add_parser("show")
    show.add_argument("run_id")
    pg = rs.add_parser("progress", help="where runs stand: steps, the newest chunk's rate and "
                                        "the time left at it, the newest checkpoint, the "
                                        "training return per seed")
    pg.add_argument("run_ids", nargs="*", metavar="run_id",
                    help="the runs (default: every run of the store that is running)")
    top = rs.add_parser("top")
    top.add_argument("--env", required=True)
    top.add_argument("--algo")
    top.add_argument("--metric", default="episode_return_mean")
    top.add_argument("-k", type=int, default=5)
    rs.add_parser("latest")
    q = rs.add_parser("sql", help="read-only SQL over the views runs, metrics, evaluations")
    q.add_argument("query")
    q.add_argument("--limit", type=whole_number, default=1000,
                   help="print at most this many rows (default 1000; 0: all)")
    q.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="stop a query running longer (default 60; 0: no limit)")
    q.add_argument("--cell-chars", type=whole_number, default=1000, metavar="N",
                   help="print at most N characters of a cell (default 1000; 0: whole cells)")
    ck = rs.add_parser("check", help="read every file of the store; list the bad ones")
    ck.add_argument("--quarantine", action="store_true",
                    help="move bad files to <runs-dir>/.quarantine/<run_id>/ (never deletes)")
    rs.add_parser("demos", help="the demonstration sets (`jaxrl demos RUN_ID` records them)")
    for sp in (ls, show, pg, top, q, swq, bq, ck, rs.choices["latest"], rs.choices["demos"]):
        sp.add_argument("--runs-dir", default=argparse.SUPPRESS)
    r.set_defaults(handler=("store", "cmd_runs"))
    ls.set_defaults(handler=("listing", "cmd_runs_ls"))  # loads no SQL engine: fast on big stores

    pl = sub.add_parser("plot", help="learning curves of the latest run of each algorithm on an env")
    pl.add_argument("--env", required=True)
    pl.add_argument("--metric", default="episode_return_mean")
    pl.add_argument("--band", choices=("iqm", "mean"), default="iqm")
    pl.add_argument("--out", default=None, help="PNG path")
    pl.add_argument("--runs-dir", default=None)
    pl.set_defaults(handler=("store", "cmd_plot"))

    cp = sub.add_parser("compare", help="IQM [CI], Welch's t-test and P(improvement) of two runs")
    cp.add_argument("run_a")
    cp.add_argument("run_b")
    cp.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    cp.add_argument("--runs-dir", default=None)
    cp.add_argument("--adaptive", dest="handler", action="store_const",
                    const=("training", "cmd_compare_adaptive"),
                    help="AdaStop: train more seeds of both runs, a batch at a time, until the "
                         "comparison is decided or --max-batches is reached (jaxrl.studies.adaptive)")
    cp.add_argument("--batch", type=int, default=5, help="--adaptive: seeds per side per batch")
    cp.add_argument("--max-batches", type=int, default=4, help="--adaptive: the cap (batches)")
    cp.add_argument("--alpha", type=float, default=0.05, help="--adaptive: family-wise error")
    cp.add_argument("--measure", default="final_eval", help="--adaptive: final_eval | "
                    "train_last100")
    cp.add_argument("--json", default=None, help="--adaptive: write the decision here")
    cp.set_defaults(handler=("store", "cmd_compare"))

    ex = sub.add_parser("export", help="export a stored run (TensorBoard, W&B offline)")
    ex.add_argument("format", choices=("tensorboard", "wandb"))
    ex.add_argument("run_id")
    ex.add_argument("--out", default=None)
    ex.add_argument("--runs-dir", default=None)
    ex.set_defaults(handler=("store", "cmd_export"))

    p = sub.add_parser("probe", help="run an algorithm up the probe ladder")
    p.add_argument("algo", help=ALGO_HELP)
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--steps", type=int, default=None, help="env steps per seed per rung")
    p.add_argument("--rungs", nargs="+", metavar="NAME", help="only these rungs (e.g. value truncation)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    p.add_argument("--json", metavar="PATH")
    p.set_defaults(handler=("training", "cmd_probe"))

    dm = sub.add_parser("demos", help="record whole episodes of a stored run's policy as "
                                      "demonstrations (for bc and gail)")
    _played_episodes(dm, episodes=10)
    dm.add_argument("--json", metavar="PATH")
    dm.set_defaults(handler=("imitation", "cmd_demos"))

    rd = sub.add_parser("render", help="a video of a stored run's policy (MP4 or GIF)")
    _played_episodes(rd, episodes=1)
    rd.add_argument("--out", required=True, metavar="FILE.mp4|FILE.gif")
    rd.add_argument("--height", type=whole_number, default=240, help="frame height in pixels")
    rd.add_argument("--checkpoint", metavar="FOLDER", default=None,
                    help="the policy of this checkpoints folder's newest checkpoint (a run's "
                         "checkpoints/, or a committed one) instead of the final one")
    rd.set_defaults(handler=("video", "cmd_render"))

    en = sub.add_parser("envs", help="list the registered environment names, by family")
    en.add_argument("--family", choices=ENV_FAMILIES, default=None,
                    help="only this family (the family picks an algorithm's defaults)")
    en.set_defaults(handler=("discover", "cmd_envs"))

    cf = sub.add_parser("config", help="an algorithm's config keys: defaults for an env, "
                                       "static or traced, what each does")
    cf.add_argument("algo", help=ALGO_HELP)
    cf.add_argument("--env", default="CartPole-v1",
                    help="the env whose family picks the defaults (default CartPole-v1)")
    cf.add_argument("--json", metavar="PATH")
    cf.add_argument("--yaml", action="store_true",
                    help="print the defaults as a YAML file for `jaxrl train --config`")
    cf.set_defaults(handler=("discover", "cmd_config"))
    for command in (t, sw, b, rm, p):
        command.add_argument("--no-compile-cache", action="store_true",
                             help="neither read nor write the persistent compilation cache "
                                  "(also: JAXRL_COMPILE_CACHE=0)")
    return parser


def _played_episodes(command, episodes: int) -> None:
    """The arguments of a command that plays a stored run's policy for whole episodes."""
    command.add_argument("run_id")
    command.add_argument("--seed", type=whole_number, default=0,
                         help="which seed's policy (default 0)")
    command.add_argument("--episodes", type=whole_number, default=episodes)
    command.add_argument("--sampled", action="store_true",
                         help="sample the policy's actions (default: its deterministic action)")
    command.add_argument("--key-seed", type=whole_number, default=0,
                         help="seed of the env resets and action samples")
    command.add_argument("--runs-dir", default=None)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        # the command is the whole process (not `main([...])` called inside one): it may make
        # process-wide choices, such as JAX's CPU device count, before JAX starts
        args.whole_process = argv is None
        module, name = args.handler
        if getattr(args, "no_compile_cache", False):
            compile_cache.disable()
        return getattr(importlib.import_module(f"jaxrl.cli.{module}"), name)(args)
    except ValueError as err:  # our config/env/algo errors are ValueError subclasses
        print(f"jaxrl: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxrl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `jaxrl runs ls | head`: the reader left; not an error to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
