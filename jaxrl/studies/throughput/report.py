"""The ladder's report (``report.md``) and figure (``ladder.png``) from its ``results.json``.

The figure is log-log: env-steps/s over all members against the member count, one colour per
workload, jaxrl's points joined by a solid line, a peer's by a dashed one, and each anchor's
published point a star labelled with its source and hardware. The report has one table per
workload (rate, compile, peak memory beside the plan's figure, the peer's rate and the ratio)
and says where and why each ladder stopped.
"""

from __future__ import annotations

import math
from pathlib import Path

from jaxrl.parts.memory import format_bytes

__all__ = ["write_figure", "write_report"]


def _points(data: dict, workload: str, lib: str) -> list[dict]:
    return sorted((p for p in data["points"] if p.get("workload") == workload
                   and p.get("lib") == lib), key=lambda p: p["members"])


def _libs(data: dict, workload: str) -> list[str]:
    libs = {p.get("lib") for p in data["points"] if p.get("workload") == workload}
    return ["jaxrl", *sorted(lib for lib in libs if lib and lib != "jaxrl")]


def whole_run_rate(point: dict) -> float:
    """A rung's env-steps/s over its whole run (compile apart): ours from every chunk
    (``env_steps_per_second_all``), a peer's as its harness timed it (its whole train call).
    The ratios and the figure use this measure for both sides; a replay fill counts in both."""
    return point.get("env_steps_per_second_all", point["env_steps_per_second"])


def _rate(value) -> str:
    return "—" if value is None else f"{value:,.0f}"


def _bytes(value) -> str:
    return "—" if value is None else format_bytes(value)


def _members(n: int) -> str:
    return f"{n:,} member{'s' if n != 1 else ''}"


def _devices(data: dict) -> str:
    kinds = sorted({f"{p.get('device_kind') or p.get('device')} ({p.get('backend', '?')}, jax "
                    f"{p.get('jax', '?')})" for p in data["points"] if p.get("status") == "ok"
                    and p.get("lib") == "jaxrl"})
    return "; ".join(kinds) or "none measured"


def _provenance(data: dict) -> str:
    """The commits and the days the points were measured on (each point records both)."""
    measured = [p for p in data["points"] if p.get("status") not in (None, "skipped")]
    commits = sorted({(p.get("commit") or "unrecorded")[:7] + ("+dirty" if p.get("commit_dirty")
                                                             else "") for p in measured})
    days = sorted({p["measured_at"][:10] for p in measured if p.get("measured_at")})
    if not measured:
        return ""
    return (f"Measured on {', '.join(days) or 'unrecorded days'} at commit"
            f"{'s' if len(commits) > 1 else ''} {', '.join(commits)} (each point in "
            "results.json names its own). ")


def _stop_line(points: list[dict], counts: list[int]) -> str:
    if not points:
        return "not measured"
    last = points[-1]
    if last["status"] == "refused":
        return f"the memory plan refused {_members(last['members'])}: {last.get('reason', '')}"
    if last["status"] in ("failed", "skipped"):
        return f"{_members(last['members'])} {last['status']}: {last.get('reason', '')}"
    higher = [c for c in counts if c > last["members"]]
    return (f"measured up to {_members(last['members'])}; not asked beyond"
            + (f" (next: {higher[0]:,})" if higher else ""))


def workload_table(data: dict, name: str) -> list[str]:
    ours = {p["members"]: p for p in _points(data, name, "jaxrl")}
    peers = [lib for lib in _libs(data, name) if lib != "jaxrl"]
    theirs = {lib: {p["members"]: p for p in _points(data, name, lib)} for lib in peers}
    head = ["members", "jaxrl env-steps/s", "steady", "compile s", "peak memory", "plan",
            "devices"]
    for lib in peers:
        head += [f"{lib} env-steps/s", f"{lib} compile s", f"ratio jaxrl/{lib}"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in sorted(ours):
        p = ours[m]
        if p["status"] != "ok":
            cells = [f"{m:,}", p["status"], "", "", "", _bytes(p.get("predicted_bytes")), ""]
        else:
            peak = _bytes(p.get("peak_bytes")) + (" (host RSS)" if p.get("peak_kind")
                                                  == "host_rss" else "")
            cells = [f"{m:,}", _rate(whole_run_rate(p)), _rate(p["env_steps_per_second"]),
                     f"{p['compile_seconds']:.1f} ({p.get('compile_source', '?')})", peak,
                     _bytes(p.get("predicted_bytes")), str(p.get("devices", ""))]
        for lib in peers:
            q = theirs[lib].get(m)
            if q is None:
                cells += ["", "", ""]
            elif q["status"] != "ok":
                cells += [q["status"], "", ""]
            else:
                ratio = (whole_run_rate(p) / whole_run_rate(q)
                         if p["status"] == "ok" and whole_run_rate(q) else None)
                cells += [_rate(q["env_steps_per_second"]), peer_compile(q),
                          "—" if ratio is None else f"{ratio:.2f}x"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def peer_compile(point: dict) -> str:
    """A peer's compile seconds as jaxrl's are counted, tracing and lowering included: its
    harness times ``.lower()`` (``lower_seconds``) apart from ``.compile()``, so the cell adds
    them and shows both (``32.4 (9.4 + 23.0)``)."""
    compile_s, lower = point.get("compile_seconds", 0.0), point.get("lower_seconds")
    if lower is None:
        return f"{compile_s:.1f}"
    return f"{lower + compile_s:.1f} ({lower:.1f} + {compile_s:.1f})"


def _short(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:.2f}M"
    return f"{rate / 1e3:.1f}k" if rate >= 1e4 else f"{rate:,.0f}"


def summary_table(data: dict) -> list[str]:
    """One row per workload, one column per member count: whole-run env-steps/s of jaxrl and
    of its peer and their ratio (``123k / 113k, 1.09x``), then the median of the ratios."""
    counts = sorted({p["members"] for p in data["points"] if p.get("status") == "ok"})
    rows = ["| workload | " + " | ".join(_members(c) for c in counts) + " |",
            "|---|" + "---|" * len(counts)]
    ratios = []
    for name in data.get("workloads", {}):
        ours = {p["members"]: p for p in _points(data, name, "jaxrl") if p["status"] == "ok"}
        if not ours:
            continue
        peers = [lib for lib in _libs(data, name) if lib != "jaxrl"]
        theirs = {p["members"]: p for lib in peers for p in _points(data, name, lib)}
        cells = []
        for c in counts:
            if c not in ours:
                cells.append("")
                continue
            rate = whole_run_rate(ours[c])
            q = theirs.get(c)
            if q is None:
                cells.append(_short(rate))
            elif q["status"] != "ok":
                cells.append(f"{_short(rate)} / {q['status']}")
            else:
                ratio = rate / whole_run_rate(q)
                ratios.append(ratio)
                cells.append(f"{_short(rate)} / {_short(whole_run_rate(q))}, {ratio:.2f}x")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    if ratios:
        ordered = sorted(ratios)
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
        rows += ["", f"Median ratio over the {len(ratios)} paired rungs: {median:.2f}x "
                     f"(from {ordered[0]:.2f}x to {ordered[-1]:.2f}x)."]
    return rows


def write_report(data: dict, out: Path, title: str = "Throughput ladder") -> Path:
    counts = sorted({p["members"] for p in data["points"]})
    lines = [f"# {title}", "",
             f"Device: {_devices(data)}. {_provenance(data)}"
             f"Ladder file `{data.get('ladder_file', '?')}`; every "
             "rung is a fresh process (`jaxrl.studies.throughput.point`) that compiles afresh. "
             "env-steps/s is over all members and the whole run of the rung's steps per member, "
             "compile apart, as the peer's harness times its train call (a replay fill counts "
             "on both sides); \"steady\" leaves jaxrl's warm-up chunks out (the first call; "
             "for replay workloads the random fill), the rate a long run settles at. Peak memory "
             "is the accelerator allocator's peak, or on the CPU the process's peak resident "
             "memory above what it held before the plan (compiling included); \"plan\" is the "
             "memory plan's figure for the busiest device. Ratios are jaxrl's rate over the "
             "peer's at the same count, measured one right after the other. Compile seconds "
             "count tracing and lowering as well as XLA's compile, on both sides (the peer's "
             "column: lowering + compile, as its harness times them apart).", "",
             "## Summary: whole-run env-steps/s, jaxrl / peer, and the ratio", ""]
    lines += [*summary_table(data), ""]
    for name, w in data.get("workloads", {}).items():
        if not _points(data, name, "jaxrl"):
            continue
        lines += [f"## {name}: {w['algo']} on {w['env']}", "",
                  f"{w['steps_per_member']:,} env steps per member per rung. Configuration: "
                  f"{w.get('source') or 'jaxrl defaults'}.", ""]
        lines += workload_table(data, name)
        lines += ["", f"Top of the ladder: {_stop_line(_points(data, name, 'jaxrl'), counts)}."]
        for lib in _libs(data, name)[1:]:
            lines += [f"- {lib} at {_members(p['members'])}: {p['status']}: {p.get('reason', '')}"
                      for p in _points(data, name, lib) if p["status"] != "ok"]
        for a in w.get("anchors", []):
            lines.append(f"- Anchor: {a['label']}, {a['env_steps_per_second']:,.0f} env-steps/s "
                         f"at {_members(a['members'])} on {a['hardware']} ({a['source']}).")
        lines.append("")
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path


def write_figure(data: dict, out: Path, title: str = "Throughput ladder") -> Path | None:
    """``ladder.png``: env-steps/s against members, log-log (None if nothing ran)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in data.get("workloads", {}) if any(
        p["status"] == "ok" for p in _points(data, n, "jaxrl"))]
    if not names:
        return None
    fig, ax = plt.subplots(figsize=(9, 6))
    colours = plt.get_cmap("tab10")
    top = 1
    for i, name in enumerate(names):
        colour = colours(i % 10)
        for lib in _libs(data, name):
            ok = [p for p in _points(data, name, lib) if p["status"] == "ok"]
            if not ok:
                continue
            xs, ys = [p["members"] for p in ok], [whole_run_rate(p) for p in ok]
            top = max(top, *xs)
            ax.plot(xs, ys, "-o" if lib == "jaxrl" else "--x", color=colour, ms=5,
                    label=f"{name} ({lib})")
        for a in data["workloads"][name].get("anchors", []):
            top = max(top, a["members"])
            ax.plot([a["members"]], [a["env_steps_per_second"]], "*", color=colour, ms=14,
                    markeredgecolor="black")
            ax.annotate(f"{a['label']}, {a['hardware']}",
                        (a["members"], a["env_steps_per_second"]), textcoords="offset points",
                        xytext=(9, -3), ha="left", fontsize=8, color=colour)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(0.7, 2 ** math.ceil(math.log2(top) + 1.5))
    ax.set_xlabel("members (seeds trained in one program)")
    ax.set_ylabel("env-steps/s over all members (whole run, compile apart)")
    ax.set_title(f"{title}: {_devices(data)}"[:110], fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    fig.tight_layout()
    path = out / "ladder.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
