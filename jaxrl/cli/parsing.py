"""The command line's light helpers (standard library only): one-line usage errors, whole-number
arguments, one-line warnings. `jaxrl --help` and `jaxrl runs ls` load this and little else."""

from __future__ import annotations

import argparse
import sys
import warnings


class UsageError(ValueError):
    """A bad command line; `main` prints it as one line and exits 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (a `UsageError`, printed by `main`), not
    usage text and a second line."""

    def error(self, message: str):
        raise UsageError(f"{message} (see {self.prog} --help)")


def whole_number(text: str) -> int:
    """A CLI whole number: ``8``, ``1e6``, ``100_000`` (not ``2.5``). Ranges are checked by the
    API (`jaxrl.run_args.check_run_args`), so the CLI and Python say the same thing."""
    try:
        value = float(text.replace("_", ""))
        if value.is_integer():
            return int(value)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")


def one_line_warnings(command):
    """``command`` with each distinct warning (a bad file skipped by a query) on one stderr
    line, once."""
    def run(args) -> int:
        shown = set()

        def show(message, *_args, **_kwargs) -> None:
            if str(message) not in shown:
                shown.add(str(message))
                print(f"jaxrl: warning: {message}", file=sys.stderr)

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            return command(args)
    return run
