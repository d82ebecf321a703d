"""The compile ledger (jaxrl.compile_ledger): a run says before its compile whether its programs
come from the persistent cache and about how long a cold compile of its env family takes here."""

import collections
import json
from pathlib import Path

from jaxrl import compile_ledger as cl

ROOT = Path(__file__).resolve().parents[1]
FAMILY_OF_WORKLOAD = {"cartpole": "discrete", "breakout-minatar": "minatar",
                      "brax-hopper": "brax", "playground-cheetah": "playground",
                      "craftax-symbolic": "craftax"}


def test_the_reference_waits_are_the_committed_measurements():
    """`REFERENCE_WAITS` is the fewest and most seconds of the compile A/B's one-member "after"
    rows per env family, as committed."""
    records = json.loads((ROOT / "benchmarks/compile-ab-cpu/results.json").read_text())["records"]
    waits = collections.defaultdict(list)
    for r in records:
        if r["tree"] == "after" and r["members"] == 1 and r["status"] == "ok":
            waits[FAMILY_OF_WORKLOAD[r["workload"].split("-", 1)[1]]].append(r["compile_seconds"])
    assert set(waits) == set(cl.REFERENCE_WAITS)
    for family, seconds in waits.items():
        low, high, _ = cl.REFERENCE_WAITS[family]
        assert (low, high) == (round(min(seconds), 2), round(max(seconds), 2)), family


def line(digests, algo="ppo", family="brax", wait=20.0, source="compiled"):
    return cl.entry(digests, {k: 1.0 for k in digests}, algo, family, "brax:hopper", 1, wait,
                    source)


def test_a_program_the_ledger_holds_is_expected_from_the_cache_while_its_entry_lasts(tmp_path):
    lines = [line({"init": "a", "chunk": "b"})]
    (tmp_path / "jit_chunk-123-cache").write_bytes(b"x")
    o = cl.outlook(lines, {"init": "a", "chunk": "b", "eval": "c"}, "ppo", "brax", tmp_path)
    # init's entry is gone (evicted): compiled again; eval was never built
    assert o.cached == ["chunk"] and o.to_compile == ["init", "eval"]
    assert o.cold == [20.0] and o.cold_of == "ppo on brax envs"
    text = cl.describe(o)
    assert text.startswith("compiling 2 of 3 programs (init, eval; chunk from the cache)")
    assert "a cold compile of ppo on brax envs took 20 s here" in text


def test_all_cached_says_so_and_the_cache_off_caches_nothing(tmp_path):
    for name in ("init", "chunk"):
        (tmp_path / f"jit_{name}-9-cache").write_bytes(b"x")
    lines = [line({"init": "a", "chunk": "b"})]
    o = cl.outlook(lines, {"init": "a", "chunk": "b"}, "ppo", "brax", tmp_path)
    assert o.to_compile == [] and "load from the compilation cache" in cl.describe(o)
    assert cl.outlook(lines, {"init": "a", "chunk": "b"}, "ppo", "brax", None).cached == []


def test_the_estimate_prefers_this_algorithm_then_the_family_then_the_reference():
    lines = [line({"chunk": "x"}, algo="sac", wait=30.0), line({"chunk": "y"}, algo="sac", wait=34.0),
             line({"chunk": "z"}, algo="ppo", wait=99.0, source="cache")]
    o = cl.outlook(lines, {"chunk": "new"}, "ppo", "brax", None)
    assert o.cold == [30.0, 34.0] and o.cold_of == "brax programs"
    assert "median of the last 2, 30-34 s" in cl.describe(o)
    fresh = cl.outlook([], {"chunk": "new"}, "ppo", "playground", None)
    assert "no compile of playground programs recorded on this machine yet" in cl.describe(fresh)
    assert "on a 2-core CPU a first compile took 49 s (PPO on CheetahRun" in cl.describe(fresh)
    assert cl.describe(cl.outlook([], {"chunk": "n"}, "ppo", "navix", None)).endswith(
        "no compile of navix programs recorded on this machine yet")


def test_a_damaged_line_hides_nothing_else_and_the_ledger_stays_bounded(tmp_path, monkeypatch):
    path = tmp_path / cl.LEDGER_NAME
    cl.record(path, line({"chunk": "a"}))
    with path.open("a") as f:
        f.write('{"programs": {"chunk": "b"}, "trunc\n\x00\x01 not json\n[1, 2]\n')
    cl.record(path, line({"chunk": "c"}))
    assert [x["programs"]["chunk"] for x in cl.read(path)] == ["a", "c"]
    monkeypatch.setattr(cl, "MAX_LINES", 3)
    for i in range(8):
        cl.record(path, line({"chunk": f"n{i}"}))
    kept = [x["programs"]["chunk"] for x in cl.read(path)]
    assert kept[-1] == "n7" and len(kept) <= 2 * 3 + 1
    assert cl.read(tmp_path / "missing.jsonl") == [] and cl.read(None) == []
    cl.record(tmp_path / "no-such-folder" / cl.LEDGER_NAME, line({"chunk": "d"}))  # no raise


def test_train_says_before_compiling_and_then_that_the_cache_serves(tmp_path, monkeypatch, capsys):
    """Two runs of one program in two fresh processes' worth of state: the first compiles
    and says it will, the second is told its programs load from the cache."""
    from jaxrl import compile_cache
    from jaxrl.engine import loop, programs
    from jaxrl.engine.spec import GroupSpec

    said: list[str] = []
    spec = GroupSpec(algo="ppo", env="CartPole-v1", total_steps=512, seeds=1,
                     configs=[{"num_envs": 4, "num_steps": 8, "hidden": (7,)}], eval_episodes=2)
    r = loop.resolve_group(spec)
    placed = loop.place_members(spec, r)
    progs, _ = loop.build_programs(spec, r, placed, 2, said.append)
    progs.settle()  # as a run does: the evaluation program compiles behind the first chunks
    folder = compile_cache.configure()
    lines = cl.read(cl.ledger_path(folder))
    mine = [x for x in lines if x["env"] == "CartPole-v1" and x["algo"] == "ppo"]
    assert mine and set(mine[-1]["programs"]) == {"init", "chunk", "eval"}
    programs.forget()  # as a new process: the programs are only on disk
    said.clear()
    loop.build_programs(spec, r, placed, 2, said.append)[0].settle()
    assert said == [said[0]] and "load from the compilation cache" in said[0], said
