"""A group's compiled programs (`Programs`: init, chunk and, compiling behind the first
chunks, evaluation) and where they came from (`compile_source`); `jaxrl.engine.loop` builds
and runs them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import Future


@dataclasses.dataclass
class Programs:
    """A group's compiled programs, their compile seconds and whether each came from the
    persistent cache. The evaluation program (none without evaluation episodes) is traced,
    lowered and compiled behind the first chunks (`programs.build_behind`): `eval_fn` waits
    for it, and the wait counts in `compile_seconds`."""

    init_fn: Callable
    chunk_fn: Callable
    built: dict  # {"init", "chunk"[, "eval"]}: `programs.Built` of each program built
    wall: float = 0.0  # seconds from the first trace until the init and chunk programs were built
    eval_behind: Future | None = None  # the evaluation program's `programs.Built`, to come
    eval_wait: float = 0.0  # seconds the run waited for it at its first evaluation
    all_built: Callable[[dict], None] | None = None  # told ``built`` once every program is built

    @property
    def evaluates(self) -> bool:
        return self.eval_behind is not None

    @property
    def eval_fn(self) -> Callable:
        """The evaluation program, waiting for its compile the first time (see `eval_wait`)."""
        return self._evaluation().program

    def settle(self) -> None:
        """Wait for the evaluation program if it is still compiling (a run that stopped before
        its first evaluation), so that `compile_parts` names every program it built."""
        if self.evaluates:
            self._evaluation()

    def _evaluation(self):
        """The evaluation program's `programs.Built`, its phases with ``waited``: what of its
        compile the run waited for here (0 for one already done)."""
        if "eval" not in self.built:
            start = time.perf_counter()
            built = self.eval_behind.result()
            self.eval_wait = time.perf_counter() - start if built.seconds > 0 else 0.0
            self.built["eval"] = built._replace(phases={**built.phases, "waited": self.eval_wait}
                                                if built.phases else {})
            if self.all_built is not None:
                self.all_built(self.built)
        return self.built["eval"]

    @property
    def compile_seconds(self) -> float:
        """The seconds a run waited for its programs: until the first chunk could start (the
        init and chunk programs compile side by side), and at the first evaluation for what of
        the evaluation program's compile the chunks before it did not cover; 0 when this
        process held them all."""
        if not any(b.seconds > 0 for b in self.built.values()):
            return 0.0
        return self.wall + self.eval_wait

    @property
    def compile_parts(self) -> dict[str, float]:
        """Seconds per program (tracing, lowering and compiling, or loading it, each its own
        while the others compiled beside it): ``{"init", "chunk", "eval"}``; 0 for a program
        this process already held."""
        return {name: b.seconds for name, b in self.built.items()}

    @property
    def compile_phases(self) -> dict[str, dict]:
        """Per program, the seconds of its phases (`programs.Built.phases`: trace, lower,
        compile; the evaluation program's ``waited`` too: what of its compile the run waited
        for at its first evaluation); ``{}`` for a program this process already held."""
        return {name: b.phases for name, b in self.built.items()}


def compile_source(programs_built: dict) -> str:
    """Where a group's programs (``{name: programs.Built}``) came from: ``"compiled"`` (all
    compiled now), ``"cache"`` (all loaded from the persistent cache or already in this
    process) or ``"partly cached"``."""
    fresh = [b.seconds > 0 and not b.from_disk for b in programs_built.values()]
    return "compiled" if all(fresh) else "cache" if not any(fresh) else "partly cached"
