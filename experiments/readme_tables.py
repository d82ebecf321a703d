"""The README's result tables, rendered from the committed files they rest on.

    python experiments/readme_tables.py            # rewrite every rendered block in place
    python experiments/readme_tables.py --check    # exit 1 naming each block that differs

A rendered block sits between ``<!-- render:NAME -->`` and ``<!-- /render:NAME -->`` in a
markdown file; its text is what `BLOCKS[NAME]` makes of the committed files, never typed by
hand. The blocks:

* ``bench-table``: one row per committed bench report (`REPORTS`): its device, seeds, budget
  against the references' and its result, counted and named from ``results.json`` (the verdicts
  by kind; each entry that is not above or inside its reference with its mean and reference;
  without verdicts, each entry's IQM);
* ``throughput-equal``: the equal-device ladder's rung medians from
  ``benchmarks/throughput-cpu-ab4/rules-longest.json`` with their pair counts;
* ``throughput-cpu``: jaxrl on two CPU devices beside rejax on one
  (``benchmarks/throughput-cpu/results.json``);
* ``throughput-gpu``: the GPU ladder's points (``benchmarks/throughput-gpu``);
* ``gpu-benches`` (docs/performance.md): the GPU plan's bench entries with their expected GPU
  minutes (`experiments/gpu_plan.py`'s ``BENCHES``);
* ``spinningup-cells`` (benchmarks/mujoco-cpu/NOTES.md): Spinning Up's twelve on-policy cells
  (VPG, TRPO and PPO at 3M on four bodies) from the mujoco report, one row a cell;
* ``table-1m`` (benchmarks/mujoco-cpu/NOTES.md): reading 002's 1M MuJoCo table (PPO and TRPO
  on seven bodies) from the mujoco report, one row a cell, in both of jaxrl's configurations.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from jaxrl.studies.bench.judge import budget_text, ratio_text, verdict_kind
from jaxrl.studies.throughput.report import whole_run_rate

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
KINDS = ("above reference", "reference inside CI", "below reference", "split", "inconclusive")
"""`judge.VERDICTS` in the order the table counts them."""
SHORT = {"above reference": "above", "reference inside CI": "inside", "below reference": "below",
         "split": "split", "inconclusive": "inconclusive"}

#: The bench reports the README's table shows, in its order: folder, what it measured (no
#: numbers: they come from the folder's results.json).
REPORTS = (
    ("classic-cpu", "`jaxrl bench classic`: PPO, A2C, TRPO, DQN, DDPG, TD3, SAC on classic "
                    "control against CleanRL's tables and RL Baselines3 Zoo"),
    ("classic-adaptive-cpu", "the classic suite's inconclusive DQN entries with `seeds: "
                             "adaptive`: batches of seeds until each verdict is decided"),
    ("classic-value-cpu", "PQN, C51, QR-DQN and IQN on CartPole against CleanRL and the zoo"),
    ("minatar-cpu", "PPO on MinAtar against gymnax's baselines, PQN against the MinAtar paper's DQN"),
    ("minatar-paper-cpu", "PQN and A2C on MinAtar in the MinAtar paper's own env (sticky "
                          "actions, 6 actions) against its DQN and its AC(lambda)"),
    ("minatar-pqn-cpu", "PQN on MinAtar against the MinAtar paper's DQN, at a scaled-down budget"),
    ("minatar-c51-cpu", "C51 on MinAtar against the MinAtar paper's DQN, at a scaled-down budget"),
    ("minatar-torsos-cpu", "PPO on Breakout-MinAtar, the MLP against the MinAtar conv torso"),
    ("mujoco-cpu", "PPO and TRPO on brax/MJX bodies against reading 002's MuJoCo table, in "
                   "jaxrl's brax defaults and in baselines' configuration, and PPO, VPG and "
                   "TRPO against Spinning Up's 3M curves"),
    ("ant-spread-cpu", "TRPO, VPG and PPO on brax's ant from Spinning Up's starting log std of "
                       "-0.5, the one setting changed from the mujoco suite's ant cells"),
    ("trpo-reacher-cpu", "TRPO on brax's reacher at 1M, the mujoco suite's defaults row with one "
                         "setting moved to baselines' value per entry"),
    ("trpo-value64-cpu", "TRPO on brax's hopper, walker2d and halfcheetah at 1M, the mujoco "
                         "suite's defaults rows with baselines' value minibatch of 64"),
    ("ppo-work-cpu", "PPO on brax's walker2d at 1M, the mujoco suite's defaults row with "
                     "baselines' gradient steps per sample"),
    ("mujoco-smoke-cpu", "every entry of the `mujoco` suite compiles and runs"),
    ("playground-cpu", "PPO and SAC on MuJoCo Playground's DM Control tasks, beside a random "
                       "policy (no published figure at these budgets)"),
    ("playground-sac-cpu", "SAC at one update per env step on the same Playground tasks"),
    ("jaxenvs-cpu", "PPO on Navix, XLand-MiniGrid and Jumanji, beside a random policy"),
    ("navix-cpu", "PPO, DQN, PQN and IQN against Navix's published rejax baseline table, measured "
                  "as the table was"),
    ("craftax-cpu", "PPO and PPO-GRU on Craftax-Symbolic against the Craftax scoreboard"),
    ("atari-gpu/pong-10m", "PPO on Atari Pong against reading 002's Atari table"),
    ("atari-gpu", "PPO on Atari Pong and Breakout, a lease's partial runs"),
)


# -- numbers ------------------------------------------------------------------------------------
def num(x: float) -> str:
    """A value at the precision its size needs: ``9,352``, ``499.7``, ``4.95``, ``0.075``."""
    if x is None:
        return "–"
    a = abs(x)
    text = (f"{x:,.0f}" if a >= 1000 else f"{x:.1f}" if a >= 100 else f"{x:.2f}" if a >= 1
            else f"{x:.3f}")
    return "0" if float(text.replace(",", "")) == 0 else text.replace("-", "\u2212")


def steps(x: float) -> str:
    """``1M``, ``995k``, ``2.5M``, ``18.4k``: three significant digits."""
    for size, unit in ((1e6, "M"), (1e3, "k")):
        if float(f"{x:.3g}") >= size:
            return f"{float(f'{x / size:.3g}'):g}{unit}"
    return f"{x:.0f}"


def rate(x: float) -> str:
    """env-steps/s as the tables print them: ``45.1M``, ``123k``, ``1,440``."""
    if x >= 1e6:
        return f"{x / 1e6:.3g}M"
    if x >= 1e4:
        return f"{x / 1e3:.3g}k"
    return f"{x:,.0f}"


def ratio(x: float) -> str:
    return f"{x:.2f}\u00d7"


# -- the bench table ------------------------------------------------------------------------------
def _ran(report: dict) -> list[dict]:
    return [r for r in report["entries"] if r.get("run_id")]


def _device(report: dict) -> str:
    """``2-core CPU`` (one CPU device per core), ``1 x NVIDIA H100 80GB HBM3``."""
    names = []
    for text in report.get("devices") or []:
        match = re.match(r"(\S+) x (\w+) \((.*)\)$", text)
        if match is None:
            if not text.startswith("None"):  # a row that ran on no device (not run)
                names.append(text)
        elif match.group(2) == "cpu":
            names.append(f"{match.group(1)}-core CPU")
        elif match.group(1) != "None":
            names.append(f"{match.group(1)} x {match.group(3)}")
    return "; ".join(dict.fromkeys(names)) or "–"


def _seeds(rows: list[dict]) -> str:
    counts = sorted({int(r["seeds"]) for r in rows})
    return ", ".join(str(c) for c in counts) or "–"


def _budget(rows: list[dict], scale: float) -> str:
    ran = list(dict.fromkeys(steps(x) for x in sorted(float(r["total_steps"]) for r in rows)))
    if not ran:
        return "–"
    text = ran[0] if len(ran) == 1 else f"{ran[0]} to {ran[-1]}"
    skips = {int(r.get("frames_per_step") or 1) for r in rows}
    if skips != {1}:
        text += " agent steps (\u00d7" + ", ".join(str(k) for k in sorted(skips - {1})) + " frames)"
    shares = [ratio_text(x) for x in sorted(float(r["budget_share"]) for r in rows
                                            if r.get("budget_share") is not None)]
    shares = list(dict.fromkeys(shares))
    if shares and shares != ["1x"]:
        text += (f"; {shares[0]} the reference's" if len(shares) == 1 else
                 f"; {shares[0]} to {shares[-1]} the references'")
    if scale != 1.0:
        text += f" (suite budget \u00d7{scale:g})"
    return text


def _against(r: dict) -> str:
    return f"`{r['entry']}` {num(r['mean'])} vs {num(r['reference'])}"


def _result(report: dict) -> str:
    rows = _ran(report)
    total = len(report["entries"])
    head = (f"{len(rows)} of {total} entries run" if len(rows) < total
            else f"{total} {'entry' if total == 1 else 'entries'}")
    unfinished = sum(r.get("status") != "finished" for r in rows)
    if unfinished:
        head += f" ({unfinished} of them not finished)"
    if report.get("budget_scale", 1.0) != 1.0:
        return f"{head}; a smoke run: no verdict"
    kinds = {r["entry"]: verdict_kind(r["verdict"]) for r in rows}
    judged = [r for r in rows if kinds[r["entry"]]]
    parts = [head]
    if judged:
        counts = [f"{SHORT[k]} {sum(v == k for v in kinds.values())}" for k in KINDS
                  if k in kinds.values()]
        parts.append("verdicts: " + ", ".join(counts))
        away = [r for r in judged if budget_text(r.get("budget_share"))]
        if away:
            parts.append(f"{len(away)} of them away from the reference's budget")
        for kind in ("below reference", "split", "inconclusive"):
            named = [r for r in judged if kinds[r["entry"]] == kind]
            if named:
                parts.append(f"{SHORT[kind]}: " + ", ".join(_against(r) for r in named))
    rest = [r for r in rows if not kinds[r["entry"]] and r.get("iqm") is not None]
    if rest:
        parts.append("no verdict (" + _no_verdict_reason(rest) + "), IQM: " + ", ".join(
            f"`{r['entry']}` {num(r['iqm'])}"
            + (f" (random {num(float(r['floor']['value']))})" if r.get("floor") else "")
            for r in rest))
    if report.get("stale"):
        parts.append("stale: the suite has changed since these runs")
    return "; ".join(parts)


def _no_verdict_reason(rows: list[dict]) -> str:
    reasons = []
    if any(r.get("reference") is None for r in rows):
        reasons.append("no reference")
    few = sorted({r["n_finite"] for r in rows if r.get("reference") is not None})
    if few:
        reasons.append("seeds " + ", ".join(str(n) for n in few) + " of 8")
    return "; ".join(reasons)


def bench_table() -> str:
    lines = ["| report | what it measured | device | seeds | env steps per seed | result |",
             "|---|---|---|---|---|---|"]
    for folder, what in REPORTS:
        report = json.loads((BENCH / folder / "results.json").read_text())
        rows = _ran(report)
        notes = BENCH / folder / "NOTES.md"
        link = f"[{folder}](benchmarks/{folder}/report.md)"
        what = what + (f" ([notes](benchmarks/{folder}/NOTES.md))" if notes.is_file() else "")
        lines.append(f"| {link} | {what} | {_device(report)} | {_seeds(rows)} | "
                     f"{_budget(rows, float(report.get('budget_scale', 1.0)))} | "
                     f"{_result(report)} |")
    return "\n".join(lines)


# -- throughput ---------------------------------------------------------------------------------
WORKLOADS = {"ppo-cartpole": "PPO CartPole-v1 (PureJaxRL's config)",
             "ppo-breakout-minatar": "PPO Breakout-MinAtar (rejax's config)",
             "ppo-brax-hopper": "PPO brax hopper (rejax's config)",
             "sac-brax-hopper": "SAC brax hopper (rejax's config, 1 gradient step per env step)",
             "dqn-cartpole": "DQN CartPole-v1 (rejax's config, replay on the device)",
             "pqn-cartpole": "PQN CartPole-v1 (purejaxql's config; rejax 0.1.3 has no PQN)",
             "pqn-breakout-minatar": "PQN Breakout-MinAtar (purejaxql's MinAtar config)",
             "dqn-breakout-minatar": "DQN Breakout-MinAtar (jaxrl's MinAtar preset, replay on "
                                     "the device)"}


def _members_header(title: str, counts: list[int]) -> list[str]:
    """A table's two header lines: ``title`` and one column per member count."""
    return ["| " + title + " | " + " | ".join(f"{m} member{'s' * (m > 1)}" for m in counts)
            + " |", "|---|" + "---|" * len(counts)]


def throughput_equal() -> str:
    rules = json.loads((BENCH / "throughput-cpu-ab4" / "rules-longest.json").read_text())
    pairs = {key: values for key, values in rules["ratios"].items()}
    counts = sorted({int(k.split("@")[1]) for k in pairs})
    workloads = [w for w in WORKLOADS if any(k.startswith(w + "@") for k in pairs)]
    lines = _members_header("workload (one CPU device each)", counts)
    for w in workloads:
        cells = []
        for m in counts:
            values = pairs.get(f"{w}@{m}")
            if not values:
                cells.append("–")
                continue
            below = sum(v < 1.0 for v in values)
            cells.append(f"{ratio(statistics.median(values))} ({len(values)} pairs"
                         + (f", {below} below 1.0" if below else "") + ")")
        lines.append(f"| {WORKLOADS[w]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _points(path: Path) -> dict[tuple[str, int, str], dict]:
    points = json.loads(path.read_text())["points"]
    return {(p["workload"], int(p["members"]), p["lib"]): p for p in points}


def throughput_cpu() -> str:
    points = _points(BENCH / "throughput-cpu" / "results.json")
    counts = sorted({m for _, m, _ in points})
    lines = _members_header("workload (jaxrl on two devices, rejax on one)", counts)
    for w in WORKLOADS:
        cells = []
        for m in counts:
            ours, peer = points.get((w, m, "jaxrl")), points.get((w, m, "rejax"))
            if ours is None or ours.get("status") != "ok":
                cells.append("–")
            elif peer is None:
                cells.append(rate(whole_run_rate(ours)))
            elif peer.get("status") != "ok":
                cells.append(f"{rate(whole_run_rate(ours))} / rejax {peer.get('status')}")
            else:
                a, b = whole_run_rate(ours), whole_run_rate(peer)
                cells.append(f"{rate(a)} / {rate(b)}, {ratio(a / b)}")
        lines.append(f"| {WORKLOADS[w]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def throughput_gpu() -> str:
    points = {**_points(BENCH / "throughput-gpu" / "short-budget" / "results.json"),
              **_points(BENCH / "throughput-gpu" / "results.json")}
    lines = ["| workload | members | jaxrl / rejax env-steps/s | ratio | device |",
             "|---|---|---|---|---|"]
    order = list(WORKLOADS)
    for (w, m, lib), ours in sorted(points.items(), key=lambda kv: (
            order.index(kv[0][0]) if kv[0][0] in order else len(order), kv[0])):
        peer = points.get((w, m, "rejax"))
        if lib != "jaxrl" or ours.get("status") != "ok" or peer is None \
                or peer.get("status") != "ok":
            continue
        a, b = whole_run_rate(ours), whole_run_rate(peer)
        lines.append(f"| {WORKLOADS.get(w, w)} | {m:,} | {rate(a)} / {rate(b)} | "
                     f"{ratio(a / b)} | {ours.get('device_kind', '–')} |")
    return "\n".join(lines)


def gpu_benches() -> str:
    """The GPU plan's bench entries in its order (`gpu_plan.BENCHES`), with their expected GPU
    minutes, the basis of each figure, and whether a call may cut and relay them; an entry a
    committed report holds finished (`gpu_plan.finished_elsewhere`) costs none and names it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_plan", ROOT / "experiments" / "gpu_plan.py")
    plan = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_plan", plan)
    spec.loader.exec_module(plan)
    lines = ["| # | suite | entry | seeds | GPU minutes | relayed | how the minutes were come by |",
             "|---|---|---|---|---|---|---|"]
    total = 0.0
    for k, b in enumerate(plan.BENCHES, 1):
        elsewhere = plan.finished_elsewhere(ROOT / "benchmarks", b)
        minutes = f"{b.minutes:g}" if elsewhere is None else "0"
        basis = b.basis if elsewhere is None else (
            f"finished in [{elsewhere}](../benchmarks/{elsewhere}): not run again")
        total += b.minutes if elsewhere is None else 0.0
        lines.append(f"| {k} | {b.suite} | `{b.entry}` | {b.seeds} | {minutes} | "
                     f"{'yes' if b.relay else 'no: must fit a call'} | {basis} |")
    lines.append(f"| | | in all | | {total:g} | | |")
    return "\n".join(lines)


SPINNING_UP_BODIES = ("hopper", "walker2d", "halfcheetah", "ant")
SPINNING_UP_ALGOS = ("vpg", "trpo", "ppo")


def _mujoco_rows() -> dict[str, dict]:
    """The mujoco report's rows by entry name."""
    report = json.loads((BENCH / "mujoco-cpu" / "results.json").read_text())
    return {r["entry"]: r for r in report["entries"]}


def _mean_ci(r: dict) -> str:
    """``mean [low, high]``: a row's mean over seeds with its 95% interval."""
    return f"{num(r['mean'])} [{num(r['mean_ci_low'])}, {num(r['mean_ci_high'])}]"


def spinningup_cells() -> str:
    """Spinning Up's twelve on-policy cells (the mujoco report's ``ALGO-3M/brax:BODY`` entries),
    one row a cell: the mean over seeds with its 95% interval, the seeds under the reference,
    the reference with its reading's uncertainty, their ratio (where both are positive) and the
    verdict; a cell not finished says so."""
    rows = _mujoco_rows()
    lines = ["| body | algorithm | jaxrl, mean [95% CI] | seeds below | Spinning Up at 3M "
             "(read off its plot) | mean / reference | verdict |",
             "|---|---|---|---|---|---|---|"]
    for body in SPINNING_UP_BODIES:
        for algo in SPINNING_UP_ALGOS:
            r = rows[f"{algo}-3M/brax:{body}"]
            reference = f"{r['reference']:,g} \u00b1 {r['reference_uncertainty']:,g}"
            if r["status"] != "finished":
                lines.append(f"| {body} | {algo.upper()} | {r['status']} | | {reference} | | |")
                continue
            share = (ratio(r["mean"] / r["reference"]) if min(r["mean"], r["reference"]) > 0
                     else "\u2013")
            lines.append(f"| {body} | {algo.upper()} | {_mean_ci(r)} | {r['seeds_below']} of "
                         f"{r['seeds']} | {reference} | {share} | {r['verdict']} |")
    return "\n".join(lines)


TABLE_1M_BODIES = ("halfcheetah", "hopper", "inverted_pendulum", "swimmer",
                   "inverted_double_pendulum", "reacher", "walker2d")
"""Reading 002's MuJoCo table's bodies, in its order; brax has no MJX swimmer."""


def _cell(r: dict | None) -> str:
    """One configuration's row of a 1M cell: mean [95% CI], seeds below, verdict."""
    if r is None:
        return "not run (brax has no MJX swimmer) | | "
    if r["status"] != "finished":
        return f"{r['status']} | | "
    return f"{_mean_ci(r)} | {r['seeds_below']} of {r['seeds']} | {r['verdict']}"


def table_1m() -> str:
    """Reading 002's 1M table cell by cell (the mujoco report's ``ALGO/brax:BODY`` and
    ``ALGO-baselines/brax:BODY`` entries): OpenAI baselines' figure, jaxrl in its brax defaults
    and in baselines' configuration (mean over seeds with its 95% interval, the seeds under
    the figure, the verdict), and the reading's own result from the entry's reference note."""
    rows = _mujoco_rows()
    lines = ["| body | algorithm | baselines at 1M | jaxrl's brax defaults, mean [95% CI] | "
             "seeds below | verdict | baselines' configuration in jaxrl, mean [95% CI] | "
             "seeds below | verdict | the reading's own |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for body in TABLE_1M_BODIES:
        for algo in ("ppo", "trpo"):
            ours, theirs = rows.get(f"{algo}/brax:{body}"), rows.get(f"{algo}-baselines/brax:{body}")
            if ours is None:
                lines.append(f"| {body} | {algo.upper()} | | {_cell(None)} | {_cell(None)} | |")
                continue
            own = ours["reference_note"].rsplit(": ", 1)[1]
            own = (own if "." in own else f"{int(own):,}").replace("-", "\u2212")
            lines.append(f"| {body} | {algo.upper()} | {num(ours['reference'])} | {_cell(ours)} | "
                         f"{_cell(theirs)} | {own} |")
    return "\n".join(lines)


BLOCKS: dict[str, Callable[[], str]] = {"bench-table": bench_table,
                                         "throughput-equal": throughput_equal,
                                         "throughput-cpu": throughput_cpu,
                                         "throughput-gpu": throughput_gpu,
                                         "gpu-benches": gpu_benches,
                                         "spinningup-cells": spinningup_cells,
                                         "table-1m": table_1m}
FILES = (ROOT / "README.md", ROOT / "docs" / "performance.md",
         ROOT / "benchmarks" / "mujoco-cpu" / "NOTES.md")


# -- rendering ----------------------------------------------------------------------------------
def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- render:{re.escape(name)} -->\n)(.*?)(<!-- /render:{re.escape(name)} -->)",
                      re.S)


def blocks_in(text: str) -> list[str]:
    """The names of the rendered blocks a markdown text holds."""
    return re.findall(r"<!-- render:([\w-]+) -->", text)


def rendered(text: str) -> str:
    """``text`` with every rendered block it holds made afresh from the files."""
    for name in blocks_in(text):
        if name not in BLOCKS:
            raise KeyError(f"unknown rendered block {name!r}; known: {sorted(BLOCKS)}")
        body = BLOCKS[name]()
        text = _pattern(name).sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(3),
                                  text)
    return text


def differing(text: str) -> list[str]:
    """The blocks of ``text`` whose content is not what the files give."""
    fresh = rendered(text)
    return [name for name in blocks_in(text)
            if _pattern(name).search(text).group(2) != _pattern(name).search(fresh).group(2)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 naming each block that differs")
    args = parser.parse_args(argv)
    bad = []
    for path in FILES:
        text = path.read_text()
        if args.check:
            bad += [f"{path.name}: {name}" for name in differing(text)]
        else:
            path.write_text(rendered(text))
    if bad:
        print("rendered blocks differ from their files (run python experiments/readme_tables.py):"
              "\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
