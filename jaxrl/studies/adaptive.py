"""Seeds bought until a comparison is decided: AdaStop (Mathieu et al., "AdaStop: adaptive
statistical testing for sound comparisons of Deep RL agents", TMLR 2024; the ``adastop``
package), a group-sequential permutation test with its family-wise error held at ``alpha``.

At interim ``k`` every side still in an undecided comparison gets its ``k``-th batch of
``batch`` seeds; the test then either decides a comparison (``larger``, ``smaller``) or asks
for another batch, and after ``max_batches`` batches calls what is left ``equal`` (no
difference found at that cap). Seeds are cheap in jaxrl (one program vmaps a batch), so a
comparison pays for the seeds its decision needs and no more.

* `decide` is the loop over any score source: ``scores(side, k) -> [batch]``.
* `compare_runs` is the store's source: each side is a stored run; its seeds are used in
  order, and when they run out the run's group spec is trained again on the next ``batch``
  seeds (a new stored run, ``meta.adds_seeds_to`` naming the first), so every score is a
  stored run's.
* `grow_entry` is a bench entry's ``seeds: adaptive``: one side against its reference, seeds
  added the same way until its verdict finds a side at the sequential level
  (`bench_judge.sequential_verdict`) or the cap.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from jaxrl.api import train
from jaxrl.measures import per_seed
from jaxrl.runs import query
from jaxrl.studies.bench.judge import judge
from jaxrl.studies.bench.report import added_runs

PERMUTATIONS = 10_000  # AdaStop's B: random permutations once the exact ones are too many
SEED_STRIDE = 100_003  # root seeds of added batches: the first run's + k * this


@dataclasses.dataclass
class Decision:
    """What an adaptive comparison decided: ``decisions`` ``{"A vs B": larger | smaller |
    equal}``, ``seeds`` used per side, the number of ``interims``, ``scores`` per side, and
    ``notes`` on what was compared (budgets that differ)."""

    decisions: dict[str, str]
    seeds: dict[str, int]
    interims: int
    scores: dict[str, list[float]]
    alpha: float
    batch: int
    max_batches: int
    runs: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)  # what the reader should know

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def decide(sides: list[str], scores: Callable[[str, int], np.ndarray], batch: int = 5,
           max_batches: int = 4, alpha: float = 0.05, seed: int = 0) -> Decision:
    """AdaStop over ``sides``: at interim ``k``, ``scores(side, k)`` gives side's ``k``-th batch
    (``[batch]`` finite scores) for every side still in an undecided comparison."""
    from adastop import MultipleAgentsComparator

    if len(sides) < 2 or len(set(sides)) != len(sides):
        raise ValueError(f"an adaptive comparison needs two or more distinct sides, got {sides}")
    if batch < 2 or max_batches < 1 or not 0.0 < alpha < 1.0:
        raise ValueError(f"need batch >= 2, max_batches >= 1 and 0 < alpha < 1; got {batch}, "
                         f"{max_batches}, {alpha}")
    test = MultipleAgentsComparator(n=batch, K=max_batches, B=PERMUTATIONS, alpha=alpha,
                                    seed=seed)
    values: dict[str, list[float]] = {s: [] for s in sides}
    needed = set(sides)
    k = 0
    for k in range(max_batches):
        for side in sides:
            if side in needed:
                got = np.asarray(scores(side, k), dtype=float).ravel()
                if got.shape != (batch,) or not np.all(np.isfinite(got)):
                    raise ValueError(f"{side}: batch {k} must be {batch} finite scores, got "
                                     f"{got.tolist()}")
                values[side] += got.tolist()
        test.partial_compare({s: np.asarray(v) for s, v in values.items()}, verbose=False)
        if test.is_finished:
            break
        needed = {sides[i] for pair in test.current_comparisons for i in pair}
    named = {f"{sides[a]} vs {sides[b]}": test.decisions[str(np.asarray((a, b)))]
             for a, b in test.comparisons}
    return Decision(named, {s: len(v) for s, v in values.items()}, k + 1, values, alpha,
                    batch, max_batches)


def compare_runs(run_a: str, run_b: str, store, measure: str = "final_eval", batch: int = 5,
                 max_batches: int = 4, alpha: float = 0.05, progress: bool = False) -> Decision:
    """`decide` between two stored runs, training more seeds of each as the test asks (see the
    module docstring). ``measure``: a `jaxrl.measures` name. Runs on different envs (or env
    options) are refused (`check_comparable`); runs of different budgets are compared, and
    ``notes`` says their budgets (more training against less is a question worth asking)."""
    pools = {run_id: SeedPool(run_id, store, measure, batch, progress)
             for run_id in (run_a, run_b)}
    check_comparable(run_a, pools[run_a].spec, run_b, pools[run_b].spec)
    result = decide([run_a, run_b], lambda side, k: pools[side].batch(k), batch, max_batches,
                    alpha)
    result.runs = {run_id: pool.run_ids for run_id, pool in pools.items()}
    steps = {run_id: pool.spec.get("total_steps") for run_id, pool in pools.items()}
    if steps[run_a] != steps[run_b]:
        result.notes.append("the runs' budgets differ (" + ", ".join(
            f"{run_id}: {_steps(n)} env steps per seed" for run_id, n in steps.items()) + ")")
    return result


def _steps(n) -> str:
    return f"{n:,}" if isinstance(n, int) else str(n)


def check_comparable(run_a: str, spec_a: dict, run_b: str, spec_b: dict) -> None:
    """A one-line `ValueError` naming both runs unless their group specs are on one env with
    the same env options: scores of two envs are on two scales, and a test between them
    decides nothing about the algorithms."""
    def env_of(spec: dict) -> str:
        options = spec.get("env_kwargs") or {}
        return str(spec.get("env")) + (f" {json.dumps(options, sort_keys=True, default=str)}"
                                       if options else "")

    env_a, env_b = env_of(spec_a), env_of(spec_b)
    if env_a.removeprefix("gymnax:") != env_b.removeprefix("gymnax:"):  # one env's two names
        raise ValueError(f"run {run_a} is on {env_a} and run {run_b} on {env_b}: an adaptive "
                         "comparison needs two runs of one env (their scores are on different "
                         "scales)")


def grow_entry(run_id: str, store, adaptive: dict, reference: float, measure: str,
               progress: bool = False) -> str:
    """A bench entry's ``seeds: adaptive`` (``adaptive``: batch, max_batches, alpha): while its
    seeds (run ``run_id`` and the runs added to it before, `added_runs`) find no side of
    ``reference`` at the sequential level and fewer than ``max_batches`` batches have run, train
    another batch. Returns the verdict it stopped at."""
    pool = SeedPool(run_id, store, measure, int(adaptive["batch"]), progress)
    while True:
        row = judge({"per_seed": pool.scores, "reference": reference, "reference_budget": None,
                     "run_id": run_id, "status": "finished", "adaptive": adaptive,
                     "total_steps": pool.spec["total_steps"]})
        looks = -(-len(pool.scores) // int(adaptive["batch"]))
        if row["verdict"].startswith(("above", "below")) or looks >= adaptive["max_batches"]:
            return row["verdict"]
        pool.grow()


class SeedPool:
    """A run's scores in seed order, with those of the runs added to extend it (found in the
    store, so an interrupted extension goes on where it stopped)."""

    def __init__(self, run_id: str, store, measure: str, batch: int, progress: bool):
        self.meta = query.show(run_id, store)
        spec = (self.meta.get("group") or {}).get("spec")
        if not spec or len(spec.get("configs") or [{}]) != 1:
            raise ValueError(f"run {run_id!r} records no single-config group spec to train more "
                             "seeds from (runs from before it was recorded, or a sweep)")
        self.spec, self.store, self.measure = spec, store, measure
        self.batch_size, self.progress = batch, progress
        earlier = added_runs(store, run_id)
        self.run_ids = [run_id] + [m["run_id"] for m in earlier]
        self.scores = [float(v) for m in (self.meta, *earlier) for v in per_seed(m, measure)]
        self.added = len(earlier)

    def batch(self, k: int) -> np.ndarray:
        want = (k + 1) * self.batch_size
        while len(self.scores) < want:
            self.grow()
        return np.asarray(self.scores[k * self.batch_size:want])

    def grow(self) -> None:
        """Train the run's spec on the next ``batch`` seeds (a new stored run)."""
        self.added += 1
        spec = self.spec
        options = {key: spec[key] for key in ("eval_every", "eval_episodes", "max_chunk_updates")
                   if spec.get(key) is not None}
        result = train(spec["algo"], spec["env"], seeds=self.batch_size,
                       total_steps=spec["total_steps"], runs_dir=str(self.store.root),
                       progress=self.progress, seed=int(spec.get("seed") or 0)
                       + SEED_STRIDE * self.added, env_kwargs=spec.get("env_kwargs"),
                       meta={"adds_seeds_to": self.run_ids[0]}, **options,
                       **(spec.get("configs") or [{}])[0])
        meta = json.loads((Path(result.run_dir) / "run.json").read_text())
        self.run_ids.append(result.run_id)
        self.scores += [float(v) for v in per_seed(meta, self.measure)]
