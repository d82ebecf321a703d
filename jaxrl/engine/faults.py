"""Fault injection for the exact-resume tests, kept out of the training loop: a real, unclean
kill (SIGKILL) right after a chunk's checkpoint is on disk, through the loop's
`jaxrl.engine.resumption.AFTER_CHECKPOINT` hooks, which a normal run leaves empty.

    python -m jaxrl.cli.faults N train ppo --env CartPole-v1 --checkpoint-every 1 ...

runs the ``jaxrl`` command line (everything after ``N``, `jaxrl.cli.faults`) and kills its own
process after the checkpoint of chunk ``N``.
"""

from __future__ import annotations

import os
import signal

from jaxrl.engine import resumption
from jaxrl.engine.checkpoint import Checkpointer


def kill_after_chunk(n: int) -> None:
    """Add the hook that SIGKILLs this process once the checkpoint of chunk ``n`` is written."""

    def hook(chunks_done: int, checkpointer: Checkpointer) -> None:
        if chunks_done == n:
            checkpointer.wait()
            os.kill(os.getpid(), signal.SIGKILL)

    resumption.AFTER_CHECKPOINT.append(hook)
