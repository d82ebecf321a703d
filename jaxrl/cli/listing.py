"""``jaxrl runs ls``: the runs of a store. When nothing in the store changed since the catalog
was last refreshed, the table comes from the listing snapshot (`jaxrl.runs.snapshot`) with the
standard library alone: the command answers before pandas, Arrow or JAX could even load.
Otherwise the catalog is refreshed the full way (`jaxrl.runs.listing`, loaded only then), which
also writes a new snapshot for the next call."""

from __future__ import annotations

import importlib
import warnings

from jaxrl.cli.parsing import one_line_warnings
from jaxrl.runs import snapshot
from jaxrl.runs.layout import store_root
from jaxrl.runs.text_table import format_columns, format_frame


@one_line_warnings
def cmd_runs_ls(args) -> int:
    root = store_root(args.runs_dir)
    records = snapshot.read_current(root) if root.is_dir() else None
    if records is None:
        return _refresh_and_list(args)
    for r in records:  # the warnings the full path gives, from the bad files it recorded
        for file, reason in r.get("bad") or []:
            warnings.warn(f"run {r['run_id']}: skipping bad file {file} ({reason})", stacklevel=1)
    rows = snapshot.select(records, algo=args.algo, env=args.env, status=args.status,
                           sweep=args.sweep)
    print(format_columns([(name, snapshot.KINDS.get(name, "str"), [r.get(name) for r in rows])
                          for name in snapshot.columns(sweep=args.sweep is not None)]))
    return 0


def _refresh_and_list(args) -> int:
    """The full path: refresh the catalog (pandas, Arrow) and print its ``ls`` frame."""
    listing = importlib.import_module("jaxrl.runs.listing")
    print(format_frame(listing.ls(listing.RunStore(args.runs_dir), algo=args.algo, env=args.env,
                                  status=args.status, sweep=args.sweep)))
    return 0
