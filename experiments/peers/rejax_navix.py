"""rejax's own algorithm on a Navix task, trained as Navix's baseline table was, on this machine's
Navix: does the table's figure come back with the peer's code on the Navix jaxrl pins?

    git -C REJAX_MIRROR archive 613bd7a src/rejax | tar -x -C /tmp/rejax-613bd7a
    PYTHONPATH=/tmp/rejax-613bd7a/src .venv/bin/python experiments/peers/rejax_navix.py \\
        dqn LavaGapS6 --seeds 8 --out benchmarks/navix-cpu/rejax_peer.json

(a user with the internet: ``pip install --no-deps git+https://github.com/keraJLi/rejax@613bd7a``).
rejax at 613bd7a is the commit Navix's ``neurips`` branch pins for its table; it runs in jaxrl's
own environment (jax, flax, optax, distrax, gymnax and Navix at jaxrl's lock), so that the one
thing that differs from jaxrl's entry is the algorithm's code.

The run is Navix's ``baselines/rejax/train.py`` at 250d46e9, step for step: the config section of
the task's table config (``experiments/benchmarks/navix_rejax_configs.json``, copied from the
table's yaml) goes to ``get_algo(algo).create(**config)``; the evaluation callback is its
``make_evaluate``: rejax's ``evaluate`` over 20 episodes with the algorithm's own ``make_act``
(epsilon 0.005 for the Q-learners); the seeds are ``jax.random.split(PRNGKey(0), SEEDS)``. Two
things differ, neither in what is learned: each seed is trained in turn by one compiled
``jax.jit(algo.train)`` (train.py vmaps them into one program), and each transition is cast to
its replay slot's dtype before it is stored (`store_in_buffer_dtype`). A seed's value at an
evaluation point is its mean return over the 20 episodes, the table's measure. Writes (or adds
to) a JSON file keyed ``ALGO/TASK``.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "experiments/benchmarks/navix_rejax_configs.json"
EVAL_EPISODES = 20
"""Episodes per evaluation point, as Navix's train.py (`make_evaluate(..., num_seeds=20)`)."""


def table_config(algo: str, task: str) -> dict:
    """The table's config section for ``algo`` on ``task`` (a one-line exit naming the tasks if
    there is none)."""
    tasks = json.loads(CONFIGS.read_text())["tasks"]
    if task not in tasks or algo not in tasks[task]:
        raise SystemExit(f"rejax_navix.py: no {algo!r} config for {task!r} in {CONFIGS.name}; "
                         f"tasks: {', '.join(tasks)}")
    return copy.deepcopy(tasks[task][algo])


def store_in_buffer_dtype() -> None:
    """Casts each transition to its replay slot's dtype before rejax's ``extend`` stores it.

    rejax keeps a Navix observation in a ``uint8`` slot while its wrapper hands the algorithm
    ``float32`` observations; the scatter then converts the whole buffer to ``float32`` and back
    every env step (for ``obs`` and ``next_obs``: most of a step's time on a CPU). The values
    stored are the same (codes 0 to 10, exact in both dtypes), so training is the same to the bit
    (`cast_is_exact`, checked before every run); the time is not."""
    from rejax.buffers import CircularBuffer

    extend = CircularBuffer.extend
    if getattr(extend, "cast_first", False):
        return

    def cast_then_extend(self, batch):
        import jax

        return extend(self, jax.tree.map(lambda slot, b: b.astype(slot.dtype), self.data, batch))

    cast_then_extend.cast_first = True
    CircularBuffer.extend = cast_then_extend


def train(algo_name: str, config: dict, seeds: int) -> dict:
    """Train ``seeds`` seeds, one after another through one compiled program; each seed's mean
    return per evaluation point."""
    import jax
    import numpy as np
    from rejax import get_algo
    from rejax.evaluate import evaluate

    algo = get_algo(algo_name).create(**copy.deepcopy(config))
    env, env_params = algo.env, algo.env_params

    def evaluation(algo, ts, rng):
        return evaluate(algo.make_act(ts), rng, env, env_params, EVAL_EPISODES)

    algo = algo.replace(eval_callback=evaluation)
    keys = jax.random.split(jax.random.PRNGKey(0), seeds)
    start = time.perf_counter()
    compiled = jax.jit(algo.train).lower(keys[0]).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    runs = [jax.block_until_ready(compiled(key))[1] for key in keys]
    train_s = time.perf_counter() - start
    lengths, returns = (np.stack([np.asarray(run[i]) for run in runs]) for i in (0, 1))
    per_point = returns.mean(axis=-1)  # [seeds, points]
    iters = int(np.ceil(config["eval_freq"] / config["num_envs"]))
    steps = [k * iters * config["num_envs"] for k in range(per_point.shape[1])]
    return {"eval_steps": steps,
            "mean_return_per_point": [round(float(v), 4) for v in per_point.mean(axis=0)],
            "final_return_per_seed": [round(float(v), 4) for v in per_point[:, -1]],
            "final_mean": round(float(per_point[:, -1].mean()), 4),
            "final_std_pop": round(float(per_point[:, -1].std()), 4),
            "final_mean_episode_length": round(float(np.asarray(lengths)[:, -1].mean()), 2),
            "compile_seconds": round(compile_s, 1), "train_seconds": round(train_s, 1)}


def cast_is_exact(algo_name: str, config: dict, steps: int = 20_480) -> bool:
    """Whether `store_in_buffer_dtype` leaves training unchanged to the bit: one seed of
    ``steps`` env steps (learning from step 2,048) trained with rejax's ``extend`` as it ships and
    with the cast first, every leaf of the two final train states compared."""
    import jax
    import numpy as np
    from rejax import get_algo
    from rejax.buffers import CircularBuffer

    short = {**copy.deepcopy(config), "total_timesteps": steps, "eval_freq": steps,
             "fill_buffer": min(config.get("fill_buffer", 2_048), 2_048)}
    algo = get_algo(algo_name).create(**short)
    algo = algo.replace(eval_callback=lambda algo, ts, rng: ())
    final_state = lambda: jax.jit(lambda key: algo.train(key))(jax.random.PRNGKey(0))[0]
    shipped = CircularBuffer.extend
    as_shipped = final_state()  # a fresh lambda each time: traced again with the extend in place
    store_in_buffer_dtype()
    cast = final_state()
    CircularBuffer.extend = shipped
    pairs = zip(jax.tree.leaves(as_shipped), jax.tree.leaves(cast), strict=True)  # rejax makes
    return all(np.array_equal(a, b) for a, b in pairs)  # a state class per trace: pair by leaf


def versions(rejax_src: Path) -> dict:
    """The versions the run used: Navix, jax, flax, optax, distrax, gymnax, and rejax's source."""
    found = {name: metadata.version(name) for name in ("Navix", "jax", "flax", "optax",
                                                       "distrax", "gymnax")}
    found["rejax_source"] = str(rejax_src)
    return found


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="rejax_navix.py", description=__doc__.split("\n")[0])
    p.add_argument("algo")
    p.add_argument("task", help="a task of the table, e.g. LavaGapS6")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--rejax-commit", default="613bd7a",
                   help="the rejax commit the source on PYTHONPATH was taken from (recorded)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    import rejax
    from rejax import get_algo
    from rejax.algos import ReplayBufferMixin

    config = table_config(args.algo, args.task)
    cast = "no replay buffer: rejax as it ships"
    if issubclass(get_algo(args.algo), ReplayBufferMixin):
        if not cast_is_exact(args.algo, config):
            raise SystemExit("rejax_navix.py: casting transitions to the buffer's dtype changed "
                             "training; not running the peer with it")
        store_in_buffer_dtype()
        cast = ("each transition cast to its replay slot's dtype: the training state after "
                "20,480 env steps is the same to the bit with and without it (cast_is_exact)")
    result = train(args.algo, config, args.seeds)
    result.update(config=config, seeds=args.seeds, rejax_commit=args.rejax_commit,
                  cast_to_buffer_dtype=cast,
                  versions=versions(Path(rejax.__file__).parent),
                  jaxrl_commit=subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                              capture_output=True, text=True).stdout.strip(),
                  date=time.strftime("%Y-%m-%d"))
    data = json.loads(args.out.read_text()) if args.out.exists() else {}
    data[f"{args.algo}/{args.task}"] = result
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("final_return_per_seed", "final_mean",
                                             "train_seconds")}))


if __name__ == "__main__":
    main(sys.argv[1:])
