"""Tables as terminal text, laid out as pandas' ``DataFrame.to_string(index=False)`` does, fast.

pandas formats cell by cell, slowly (0.9-1.2 s for the 10,000 rows of ``jaxrl runs ls`` on a
store of 10,000 runs, the whole budget of the command), and importing it costs half a second.
`format_columns` lays out plain Python columns with the standard library alone (what ``jaxrl
runs ls`` prints from the listing snapshot); `format_frame` is the same for a DataFrame. Same
layout for the types the run store shows (strings, integers, floats, booleans, nulls): columns
right-aligned under their names, one space apart, floats with the fewest of six decimals that
drops no digit (pandas switches to exponents for tiny or huge floats; this does not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

DECIMALS = 6
KINDS = ("str", "int", "float", "bool")


def float_text(values: Sequence) -> list[str]:
    """Fixed-point text with `DECIMALS` decimals, less the trailing zeros all finite values
    share (at least one decimal kept); None and NaN as ``NaN``; a space before non-negative
    values when some are negative, as pandas aligns them."""
    values = [math.nan if v is None else float(v) for v in values]
    finite = [math.isfinite(v) for v in values]
    text = [f"{v:.{DECIMALS}f}" if ok else "" for v, ok in zip(values, finite)]
    shown = [t for t, ok in zip(text, finite) if ok]
    if shown:
        cut = min(min(len(t) - len(t.rstrip("0")) for t in shown), DECIMALS - 1)
        text = [t[:len(t) - cut] if cut else t for t in text]
    sign = " " if any(v < 0 for v, ok in zip(values, finite) if ok) else ""
    return [(t if t.startswith("-") else sign + t) if ok else str(v).replace("nan", "NaN")
            for t, ok, v in zip(text, finite, values)]


def cells(kind: str, values: Sequence) -> list[str]:
    """One column's cells; ``kind`` is one of `KINDS` (None prints as pandas prints a null of
    that kind: ``NaN``, ``<NA>`` or ``None``; a float NaN among strings as ``NaN``)."""
    if kind == "float":
        return float_text(values)
    if kind in ("int", "bool"):
        return ["<NA>" if v is None else str(v) for v in values]
    return ["None" if v is None else "NaN" if isinstance(v, float) and math.isnan(v) else str(v)
            for v in values]


def format_columns(columns: Sequence[tuple[str, str, Sequence]]) -> str:
    """``(name, kind, values)`` columns as text (no rows: ``(no rows)``). pandas puts a space
    before the names of numeric and boolean columns."""
    if not columns or not len(columns[0][2]):
        return "(no rows)"
    laid_out = []
    for name, kind, values in columns:
        body = cells(kind, values)
        header = f" {name}" if kind != "str" else str(name)
        width = max(len(header), *map(len, body))
        laid_out.append([header.rjust(width)] + [c.rjust(width) for c in body])
    return "\n".join(" ".join(row) for row in zip(*laid_out))


def format_frame(frame) -> str:
    """A DataFrame as text without its index (empty frames: ``(no rows)``); dtypes beyond the
    run store's (dates, categories ...) are left to pandas."""
    import pandas as pd
    from pandas.api import types

    if not len(frame):
        return "(no rows)"
    columns = []
    for name in frame.columns:
        col = frame[name]
        if types.is_float_dtype(col):
            kind, values = "float", col.to_numpy(dtype=float, na_value=math.nan).tolist()
        elif types.is_bool_dtype(col) or types.is_integer_dtype(col):
            kind = "bool" if types.is_bool_dtype(col) else "int"
            values = [None if v is pd.NA else v for v in col.astype(object).tolist()]
        elif types.is_object_dtype(col) or types.is_string_dtype(col):
            kind, values = "str", col.tolist()
        else:
            return frame.to_string(index=False)
        columns.append((name, kind, values))
    return format_columns(columns)


def clip_cells(frame, max_chars: int):
    """``(frame, cut)``: ``frame`` with every cell of a text or object column (strings, lists,
    blobs) whose text is longer than ``max_chars`` cut to its first ``max_chars - 1``
    characters and ``…``, and how many cells were cut. Other cells are kept as they are."""
    from pandas.api import types

    clipped, cut = frame.copy(), 0
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        if not (types.is_object_dtype(col) or types.is_string_dtype(col)):
            continue
        values = col.tolist()
        for i, v in enumerate(values):
            text = v if isinstance(v, str) else str(v)
            if len(text) > max_chars:
                values[i], cut = text[:max_chars - 1] + "…", cut + 1
        clipped.isetitem(j, values)
    return clipped, cut
