"""``jaxrl runs ls``: the runs of a store, from its catalog. Its own module so that listing loads
neither JAX nor the SQL engine (`jaxrl.runs.listing`)."""

from __future__ import annotations

from jaxrl.cli.common import one_line_warnings, print_frame
from jaxrl.runs.listing import ls
from jaxrl.runs.store import RunStore


@one_line_warnings
def cmd_runs_ls(args) -> int:
    print_frame(ls(RunStore(args.runs_dir), algo=args.algo, env=args.env, status=args.status,
                   sweep=args.sweep))
    return 0
