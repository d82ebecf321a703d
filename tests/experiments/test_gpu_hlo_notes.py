"""The GPU-program notes (benchmarks/gpu-hlo-cpu/NOTES.md) say what the committed kernel counts
say: the table's rows, the scopes' table and the figures in the bullets."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu-hlo-cpu"


@pytest.fixture(scope="module")
def rows():
    return {r["label"]: r for r in json.loads((ROOT / "sac-kernels.json").read_text())}


@pytest.fixture(scope="module")
def notes():
    return (ROOT / "NOTES.md").read_text()


def _updates(row: dict) -> int:
    return sum(n for k, n in row["by_kind"].items() if k.startswith("loop_dynamic_update_slice"))


def test_the_kernels_table_is_the_counts(rows, notes):
    assert len(rows) == 4
    for label, row in rows.items():
        reductions = row["by_kind"].get("input_reduce_fusion (kInput)", 0)
        assert f"| {label} | {row['kernels']} | {_updates(row)} | {reductions} |" in notes


def test_the_bullets_and_the_scopes_are_the_counts(rows, notes):
    before, after, *_ = rows.values()
    assert f"{_updates(before)} of the {before['kernels']} kernels" in notes
    assert f"the count to **{after['kernels']}**" in notes
    scopes = {k: n for k, n in after["by_scope"].items() if ":" not in k}
    assert sum(scopes.values()) == after["kernels"]
    for scope, n in scopes.items():
        assert f"| {scope} | {n} |" in notes
    reduces = after["by_scope"]["optimizer: input_reduce_fusion (kInput)"]
    assert f"Of the optimizer's {scopes['optimizer']}, {reduces} are reductions" in notes
    assert f"The diagnostics' own statistics are {scopes['diagnostics']} kernels" in notes
    cpu = json.loads((ROOT / "sac-kernels-cpu.json").read_text())
    assert cpu[0]["kernels"] == cpu[1]["kernels"]
    assert f"{cpu[0]['kernels']} kernels a step before and after" in notes


def test_the_performance_page_says_the_same(rows):
    before, after, _, rejax = rows.values()
    page = (ROOT.parents[1] / "docs" / "performance.md").read_text()
    assert (f"launched {before['kernels']} kernels a gradient step against rejax's "
            f"{rejax['kernels']}; {_updates(before)} of them stored") in page
    assert f"summed in the loop ({after['kernels']} kernels;" in page


def test_the_round_branches_and_the_warmup_arithmetic(rows, notes):
    from tests.experiments.scripts import load

    before, _, skipped, rejax = rows.values()
    assert before["round_conditionals"] == []
    ((learn, skip),) = [c["branch_kernels"] for c in skipped["round_conditionals"]]
    assert f"| jaxrl, warm-up rounds skipped | {learn:,} (learn) or {skip} (skip) |" in notes
    big = max(rejax["round_conditionals"], key=lambda c: max(c["branch_kernels"]))
    assert (f"| rejax 0.1.3 with jaxrl's draw | {max(big['branch_kernels']):,} (learn) or "
            f"{min(big['branch_kernels'])} (skip) |") in notes
    w = load("gpu_plan").workloads(dry=False)["sac-brax-hopper"]
    rounds = w.steps_per_member // w.config["num_envs"]
    warm = -(-w.config["learning_starts"] // w.config["num_envs"])
    assert (f"{w.steps_per_member:,} env steps a member in rounds of {w.config['num_envs']}"
            in notes and f"the first {w.config['learning_starts']:,}" in notes)
    assert f"learns in {rounds - warm} of its {rounds} rounds" in notes
    ratios = [r["kernels"] / rejax["kernels"] for r in (skipped, before)]
    assert f"{ratios[0]:.2f} to {ratios[1]:.2f} times the kernels" in notes


def test_the_rewritten_fingerprint_value_is_the_files():
    fingerprints = json.loads((ROOT.parents[1] / "tests" / "algos" / "fingerprints.json")
                              .read_text())
    value = float.fromhex(fingerprints["cases"]["sac"]["metrics"]["actor_grad_norm"][5])
    notes = (ROOT / "NOTES.md").read_text()
    assert f"`actor_grad_norm` there is now {value:.7f}" in notes


@pytest.fixture(scope="module")
def ppo():
    return json.loads((ROOT / "ppo-kernels.json").read_text())


@pytest.fixture(scope="module")
def thunks():
    return {m["label"]: m for m in json.loads((ROOT / "ppo-thunks.json").read_text())}


def test_the_ppo_kernels_table_is_the_counts(ppo, notes):
    update = {r["label"]: r["kernels"] for r in ppo["update"]}
    minibatch = {r["label"]: r["kernels"] for r in ppo["minibatch"]}
    assert update.keys() == minibatch.keys() and len(update) == 3
    for label in update:
        assert f"| {label} | {update[label]} | {minibatch[label]} |" in notes
    before, after, rejax = update.values()
    assert f"took {before - after} kernels off an update" in notes
    assert f"{after - rejax} extra kernels an update" in notes


def test_the_launches_table_is_the_thunk_counts(thunks, notes):
    assert len(thunks) == 3
    for label, module in thunks.items():
        update, *_, minibatch = module["loops"]  # outermost first, the minibatch loop last
        assert minibatch["trip"] == 2 and update["depth"] == 0
        per = update["per_iteration"]
        other = per.get("kCustomKernel", 0) + per.get("kCopy", 0)
        row = (f"| {label} | {sum(per.values())} | {per['kCommandBuffer']} | "
               f"{per['kDynamicSliceFusion']} | {other} | "
               f"{sum(minibatch['per_iteration'].values())} |")
        assert row in notes
    jaxrl = sum(thunks["jaxrl, metrics summed"]["loops"][0]["per_iteration"].values())
    rejax = sum(thunks["rejax 0.1.3"]["loops"][0]["per_iteration"].values())
    assert f"{jaxrl} against {rejax}" in notes
    loan = (ROOT.parent / "throughput-gpu" / "NOTES.md").read_text()
    assert f"{jaxrl} launches an update against\n  rejax's {rejax}" in loan
