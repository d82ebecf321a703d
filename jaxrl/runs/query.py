"""DuckDB queries over a run store: views ``runs`` (one row per run) and ``metrics`` (one row
per run x seed x update), plus ``evaluations``. Everything returns pandas DataFrames."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import duckdb
import pandas as pd

from jaxrl.runs.store import RunStore, StoreError, repair_if_dead

RUN_COLUMNS = ["run_id", "algo", "env", "status", "seeds", "total_steps_per_seed",
               "final_eval_return_mean", "final_eval_return_iqm", "compile_seconds",
               "run_seconds", "env_steps_per_second", "started_at", "ended_at", "git_commit",
               "git_dirty", "sweep_id", "device_kind", "device_count", "command_line"]


class QueryError(ValueError):
    """A bad SQL query or argument; the message is DuckDB's (one line)."""


def runs_frame(store: RunStore) -> pd.DataFrame:
    rows = []
    for folder in store.run_dirs():
        try:
            meta = repair_if_dead(folder / "run.json", json.loads((folder / "run.json").read_text()))
        except (OSError, json.JSONDecodeError):
            continue
        row = {c: meta.get(c) for c in RUN_COLUMNS}
        row["config"] = json.dumps(meta.get("config", {}))
        row["final_eval_return"] = json.dumps(meta.get("final_eval_return"))
        rows.append(row)
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS + ["config", "final_eval_return"])
    return frame.astype({"git_dirty": "boolean"}) if len(frame) else frame


def _sql_list(paths: list[str]) -> str:
    """A DuckDB list literal of quoted paths (views cannot take prepared parameters)."""
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"


def connect(store: Optional[RunStore] = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views ``runs``, ``metrics``, ``evaluations``."""
    store = store or RunStore()
    con = duckdb.connect()
    con.register("runs_df", runs_frame(store))
    con.execute("CREATE VIEW runs AS SELECT * FROM runs_df")
    root = Path(store.root)
    metric_files = sorted(str(p) for p in root.glob("*/metrics/chunk-*.parquet"))
    if metric_files:
        con.execute(f"CREATE VIEW metrics AS SELECT * FROM read_parquet({_sql_list(metric_files)}, "
                    "union_by_name=true)")
    else:
        con.execute("CREATE VIEW metrics AS SELECT NULL::VARCHAR AS run_id, NULL::BIGINT AS seed, "
                    "NULL::BIGINT AS update WHERE false")
    eval_files = sorted(str(p) for p in root.glob("*/evaluations.parquet"))
    if eval_files:
        con.execute(f"CREATE VIEW evaluations AS SELECT * FROM read_parquet({_sql_list(eval_files)}, "
                    "union_by_name=true)")
    return con


def sql(query: str, store: Optional[RunStore] = None) -> pd.DataFrame:
    """Run any SQL over the views; errors become `QueryError` with DuckDB's message."""
    con = connect(store)
    try:
        return con.execute(query).df()
    except duckdb.Error as err:
        raise QueryError(str(err).splitlines()[0]) from None


def ls(store: Optional[RunStore] = None, algo: Optional[str] = None, env: Optional[str] = None,
       status: Optional[str] = None, sweep: Optional[str] = None) -> pd.DataFrame:
    where, params = [], []
    for col, val in (("algo", algo), ("env", env), ("status", status), ("sweep_id", sweep)):
        if val is not None:
            where.append(f"{col} = ?")
            params.append(val)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    con = connect(store)
    return con.execute(
        f"SELECT run_id, algo, env, status, seeds, total_steps_per_seed, final_eval_return_iqm, "
        f"env_steps_per_second, started_at"
        f"{', sweep_id' if sweep else ''} FROM runs {clause} ORDER BY started_at, run_id",
        params).df()


def show(run_id: str, store: Optional[RunStore] = None) -> dict:
    return (store or RunStore()).load(run_id)


def top(env: str, metric: str, k: int = 5, algo: Optional[str] = None,
        store: Optional[RunStore] = None, last_updates: int = 10) -> pd.DataFrame:
    """Top ``k`` finished runs on ``env`` (of ``algo``) by the final mean of ``metric``: the
    mean over seeds of the metric averaged over each seed's last ``last_updates`` updates.
    ``metric`` may also be ``final_eval_return`` (the final evaluation, IQM over seeds)."""
    con = connect(store)
    params = [env] + ([algo] if algo else [])
    algo_clause = "AND r.algo = ?" if algo else ""
    if metric == "final_eval_return":
        return con.execute(
            f"SELECT r.run_id, r.algo, r.env, r.seeds, r.final_eval_return_iqm AS value "
            f"FROM runs r WHERE r.status = 'finished' AND r.env = ? {algo_clause} "
            f"ORDER BY value DESC NULLS LAST LIMIT {int(k)}", params).df()
    columns = {row[0] for row in con.execute("DESCRIBE metrics").fetchall()}
    if metric not in columns:
        raise QueryError(f"unknown metric {metric!r}; known: final_eval_return, "
                         f"{', '.join(sorted(columns - {'run_id', 'seed', 'update'}))}")
    return con.execute(
        f"""WITH last AS (
              SELECT m.run_id, m.seed, avg(m."{metric}") AS v FROM metrics m
              JOIN (SELECT run_id, seed, max(update) AS u FROM metrics GROUP BY run_id, seed) mx
                ON m.run_id = mx.run_id AND m.seed = mx.seed
              WHERE m.update > mx.u - {int(last_updates)} GROUP BY m.run_id, m.seed)
            SELECT r.run_id, r.algo, r.env, r.seeds, avg(last.v) AS value
            FROM runs r JOIN last ON r.run_id = last.run_id
            WHERE r.status = 'finished' AND r.env = ? {algo_clause}
            GROUP BY r.run_id, r.algo, r.env, r.seeds
            ORDER BY value DESC NULLS LAST LIMIT {int(k)}""", params).df()


def latest(store: Optional[RunStore] = None) -> pd.DataFrame:
    """The newest finished run per (algo, env)."""
    con = connect(store)
    return con.execute(
        """SELECT run_id, algo, env, seeds, final_eval_return_iqm, started_at FROM (
             SELECT *, row_number() OVER (PARTITION BY algo, env
                                          ORDER BY started_at DESC, run_id DESC) AS rn
             FROM runs WHERE status = 'finished') WHERE rn = 1 ORDER BY env, algo""").df()


def load_metrics(run_id: str, store: Optional[RunStore] = None) -> pd.DataFrame:
    store = store or RunStore()
    files = sorted((Path(store.root) / run_id / "metrics").glob("chunk-*.parquet"))
    if not files:
        raise StoreError(f"no metrics stored for run {run_id!r}")
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def load_evaluations(run_id: str, store: Optional[RunStore] = None) -> pd.DataFrame:
    store = store or RunStore()
    path = Path(store.root) / run_id / "evaluations.parquet"
    return pd.read_parquet(path) if path.is_file() else pd.DataFrame()
