"""Time rejax 0.1.3 as it ships at one member count: one point of a throughput ladder.

    python experiments/peers/rejax_point.py WORKLOAD MEMBERS STEPS_PER_MEMBER \
        [--repeat N] [--out FILE.jsonl] [--seed S] [--workloads FILE.yaml] [--no-vmap] [--eval]
        [--set KEY=VALUE ...] [--draw-with-replacement]

WORKLOAD is a section of rejax_workloads.yaml (beside this file; --workloads picks another
file in the same form, e.g. rejax_cartpole.yaml, whose one section is `ppo`); its algorithm is
the name up to the first "-". The section is passed to rejax's own `Algo.create` with
total_timesteps = STEPS_PER_MEMBER and rejax's in-loop evaluation off (eval_callback returns
nothing, eval_freq = total_timesteps, skip_initial_evaluation), so the timed program is pure
training.

The program is what rejax's users run for several seeds: `jax.jit(jax.vmap(algo.train))` over
MEMBERS keys split from one seed; one member is vmapped over a batch of one as well, unless
--no-vmap (then `jax.jit(algo.train)` on the key itself, as the old bench_rejax.py did for one
seed). Lowering and compiling are timed apart (AOT: `.lower(keys)`, `.compile()`); the compiled
program then runs --repeat times (each to block_until_ready), and env-steps/s is taken from the
fastest run. rejax rounds total_timesteps up to whole iterations, so steps_per_member is read
back from the train state (global_step), not taken from the command line.

Prints exactly one JSON line on stdout (and appends it to --out): see README.md beside this
file for the keys. Anything the libraries print (brax's import notices, XLA warnings) goes to
stderr. A failure exits non-zero with one line on stderr (exit 3: out of memory; 2: bad
arguments or workload; 1: anything else), the traceback kept in the log file that line names.
--eval also evaluates each member's final policy with rejax's default evaluation (128 episodes)
after the timing, outside it, and adds the mean returns.

Two options change rejax for an ablation, and the JSON line names them (``overrides``,
``ablation``), so such a point is never read as rejax as it ships: --set KEY=VALUE overrides one
field of the workload section (a YAML value: ``--set num_epochs=64``), and
--draw-with-replacement makes rejax's `ReplayBuffer.sample` draw its minibatch the way jaxrl's
uniform buffer does (``jax.random.randint`` over the filled slots, with replacement) instead of
``jax.random.choice`` without replacement over every slot of the buffer.
"""

import argparse
import datetime
import json
import os
import platform
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_WORKLOADS = HERE / "rejax_workloads.yaml"
PROFILE_VAR = "JAXRL_PROFILE_DIR"
"""Set to a folder: after the timed runs, one more run under `jax.profiler.trace` into it (the
same variable jaxrl's throughput point reads)."""


class PointError(Exception):
    """A failure reported as one line (the message) and an exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        usage = " ".join(self.format_usage().split()[1:])
        raise PointError(f"{message} (usage: {usage})", 2)


def parse_args(argv):
    p = OneLineParser(prog="rejax_point.py", description=__doc__.split("\n")[0])
    p.add_argument("workload")
    p.add_argument("members", type=int)
    p.add_argument("steps_per_member", type=int)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--out", default=None, help="append the JSON line to this file too")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workloads", default=str(DEFAULT_WORKLOADS))
    p.add_argument("--no-vmap", action="store_true",
                   help="one member only: jax.jit(algo.train) on one key, no vmap")
    p.add_argument("--eval", action="store_true",
                   help="evaluate the final policies after the timing (not timed)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override one field of the workload (an ablation; recorded)")
    p.add_argument("--draw-with-replacement", action="store_true",
                   help="ablation: rejax's replay draw with replacement, as jaxrl's (recorded)")
    args = p.parse_args(argv)
    if args.members < 1 or args.steps_per_member < 1 or args.repeat < 1:
        raise PointError("MEMBERS, STEPS_PER_MEMBER and --repeat must be at least 1", 2)
    if args.no_vmap and args.members != 1:
        raise PointError("--no-vmap needs MEMBERS = 1", 2)
    args.overrides = dict(map(override, args.set))
    return args


def override(item: str) -> tuple[str, object]:
    """``--set KEY=VALUE`` as ``(key, value)``, the value read as YAML (``64``, ``true``)."""
    import yaml

    key, sep, value = item.partition("=")
    if not sep or not key:
        raise PointError(f"--set {item!r}: not KEY=VALUE", 2)
    return key, yaml.safe_load(value)


def draw_with_replacement(buffer, num, rng):
    """rejax's `ReplayBuffer.sample` with jaxrl's uniform draw: ``num`` slot indices with
    replacement among the filled ones (the ablation --draw-with-replacement)."""
    import jax

    index = jax.random.randint(rng, (num,), 0, buffer.num_entries)
    return jax.tree.map(lambda arr: arr[index], buffer.data)


def load_workload(path, name):
    import yaml

    try:
        with open(path) as f:
            sections = yaml.safe_load(f) or {}
    except OSError as e:
        raise PointError(f"cannot read workloads file {path}: {e.strerror}", 2) from None
    except yaml.YAMLError as e:
        msg = str(e).splitlines()[0]
        raise PointError(f"workloads file {path} is not valid YAML: {msg}", 2) from None
    if name not in sections:
        known = ", ".join(sections) or "none"
        raise PointError(f"unknown workload {name!r} in {path} (known: {known})", 2)
    return dict(sections[name])


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def train_state_steps(ts):
    """The largest optimizer step count among the train state's TrainStates, per member."""
    import jax
    import numpy as np
    from flax.training.train_state import TrainState

    steps = [np.asarray(x.step).reshape(-1)
             for x in jax.tree_util.tree_leaves(ts, is_leaf=lambda x: isinstance(x, TrainState))
             if isinstance(x, TrainState)]
    return np.max(np.stack(steps), axis=0) if steps else None


def measure(args, state):
    state["phase"] = "import"
    cfg = load_workload(args.workloads, args.workload)
    algo_name = args.workload.split("-", 1)[0]

    import importlib.metadata as md

    import jax
    import numpy as np
    import rejax

    if algo_name not in rejax._algos:
        raise PointError(f"workload {args.workload!r}: no rejax algorithm {algo_name!r} "
                   f"(rejax has {', '.join(rejax._algos)})", 2)

    state["phase"] = "create"
    cfg.update(args.overrides)
    if args.draw_with_replacement:
        import functools

        from rejax.buffers import ReplayBuffer

        ReplayBuffer.sample = functools.partial(jax.jit, static_argnames=("num",))(
            draw_with_replacement)
    cfg["total_timesteps"] = args.steps_per_member
    cfg["eval_freq"] = args.steps_per_member
    cfg["skip_initial_evaluation"] = True
    algo = rejax.get_algo(algo_name).create(**cfg)
    default_eval = algo.eval_callback
    algo = algo.replace(eval_callback=lambda a, ts, rng: ())

    key = jax.random.PRNGKey(args.seed)
    if args.no_vmap:
        f = jax.jit(algo.train)
        keys = key
    else:
        f = jax.jit(jax.vmap(algo.train))
        keys = jax.random.split(key, args.members)
    dev = jax.devices()[0]
    rss0 = peak_rss_bytes()

    state["phase"] = "lower"
    t0 = time.perf_counter()
    lowered = f.lower(keys)
    t1 = time.perf_counter()
    state["phase"] = "compile"
    compiled = lowered.compile()
    t2 = time.perf_counter()

    state["phase"] = "run"
    run_seconds = []
    for _ in range(args.repeat):
        t3 = time.perf_counter()
        ts, _ = compiled(keys)
        jax.block_until_ready(ts)
        run_seconds.append(time.perf_counter() - t3)

    trace_dir = os.environ.get(PROFILE_VAR)
    if trace_dir:  # once more, untimed, under the profiler (the GPU plan's profile)
        with jax.profiler.trace(trace_dir):
            jax.block_until_ready(compiled(keys)[0])

    peak, peak_kind = None, "host_rss"
    stats = dev.memory_stats() if dev.platform != "cpu" else None
    if stats and "peak_bytes_in_use" in stats:
        peak, peak_kind = int(stats["peak_bytes_in_use"]), "device"
    else:
        peak = peak_rss_bytes() - rss0

    state["phase"] = "read back"
    global_step = np.asarray(ts.global_step).reshape(-1)
    if not (global_step == global_step[0]).all():
        raise PointError(f"members did different step counts: {sorted(set(global_step.tolist()))}")
    steps = int(global_step[0])
    grad_steps = train_state_steps(ts)
    grad_steps = int(grad_steps[0]) if grad_steps is not None else None
    per_iteration = algo.num_envs * getattr(algo, "num_steps", 1)

    def version(dist):
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return None

    result = {
        "lib": "rejax",
        "version": version("rejax"),
        "workload": args.workload,
        "algo": algo_name,
        "env": cfg["env"],
        "members": args.members,
        "vmapped": not args.no_vmap,
        "requested_steps_per_member": args.steps_per_member,
        "steps_per_member": steps,
        "iterations": steps // per_iteration,
        "gradient_steps": grad_steps,
        "learning_started": bool(grad_steps),
        "lower_seconds": t1 - t0,
        "compile_seconds": t2 - t1,
        "run_seconds": run_seconds,
        "env_steps_per_second": args.members * steps / min(run_seconds),
        "device": f"{dev.platform}:{dev.id} ({dev.device_kind})",
        "device_kind": dev.device_kind,
        "device_count": jax.device_count(),
        "peak_bytes": peak,
        "peak_kind": peak_kind,
        "jax": jax.__version__,
        "jaxlib": version("jaxlib"),
        "gymnax": version("gymnax"),
        "brax": version("brax") if cfg["env"].startswith("brax/") else None,
        "backend": jax.default_backend(),
        "python": platform.python_version(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "seed": args.seed,
        "utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workloads_file": os.path.basename(args.workloads),
        "config": cfg,
    }
    if args.overrides:
        result["overrides"] = args.overrides
    if args.draw_with_replacement:
        result["ablation"] = "draw_with_replacement"

    if args.eval:
        state["phase"] = "eval"
        ev_keys = jax.random.split(jax.random.PRNGKey(1234), args.members)
        if args.no_vmap:
            _, returns = jax.jit(lambda t, k: default_eval(algo, t, k))(ts, ev_keys[0])
            returns = returns[None]
        else:
            _, returns = jax.jit(jax.vmap(lambda t, k: default_eval(algo, t, k)))(ts, ev_keys)
        per_member = np.asarray(returns).reshape(args.members, -1).mean(axis=1)
        result["eval_return_mean"] = float(per_member.mean())
        result["eval_return_per_member"] = [float(x) for x in per_member]
    return result


def is_oom(exc):
    text = f"{type(exc).__name__}: {exc}"
    return isinstance(exc, MemoryError) or any(
        s in text for s in ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory",
                            "OutOfMemory", "Cannot allocate memory"))


def first_line(exc, limit=300):
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except PointError as e:
        sys.stderr.write(f"rejax_point: {e}\n")
        return e.status
    # Everything the libraries write to fd 1 or 2 (brax prints notices on import to stdout)
    # goes to a log; stdout gets the JSON line only, stderr the log (on success) or one line.
    real_out = os.fdopen(os.dup(1), "w")
    real_err = os.fdopen(os.dup(2), "w")
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - stays open across the redirection
        "w+", prefix="rejax_point-", suffix=".log", delete=False
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    state = {"phase": "start"}
    members = args.members
    status, message, result, keep_log = 0, None, None, False
    try:
        result = measure(args, state)
    except PointError as e:
        status, message = e.status, str(e)
    except KeyboardInterrupt:
        status, message = 130, f"interrupted during {state['phase']}"
    except BaseException as e:  # one line; the traceback goes to the log
        traceback.print_exc()
        where = f"at {members} members ({state['phase']})"
        if is_oom(e):
            status, message = 3, f"out of memory {where}: {first_line(e)}"
        else:
            status, message = 1, f"{state['phase']} failed at {members} members: {first_line(e)}"
        message += f" (traceback in {log.name})"
        keep_log = True
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(real_out.fileno(), 1)
    os.dup2(real_err.fileno(), 2)
    log.flush()
    if message is None:
        log.seek(0)
        noise = log.read()
        if noise:
            real_err.write(noise if noise.endswith("\n") else noise + "\n")
    log.close()
    if not keep_log:
        os.unlink(log.name)
    if message is not None:
        real_err.write(f"rejax_point: {message}\n")
        real_err.flush()
        return status
    real_err.flush()
    if result is not None:
        line = json.dumps(result)
        real_out.write(line + "\n")
        real_out.flush()
        if args.out:
            with open(args.out, "a") as fo:
                fo.write(line + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
