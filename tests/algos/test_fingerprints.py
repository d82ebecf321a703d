"""Every built-in algorithm's metrics on fixed seeds are what they were when
``fingerprints.json`` was written: a refactor of the algorithm layer must not change a single
bit of what a user's run computes.

Each case trains 2 seeds for a few updates (`CASES`) and keeps, per metric, the exact float64
values of every (seed, update) row, written as ``float.hex``; the final evaluation returns too.
Wall-clock metrics (`TIMED`) are left out.

Bit equality holds on the machine kind the file was written on (``platform``: JAX, jaxlib,
the CPU's vector extensions and its vendor and model). XLA compiles for the CPU it runs on, so
another CPU kind may order a reduction differently: there each seed's first update is compared at
`OTHER_MACHINE_RTOL` instead (later updates drift past any tolerance), and the failure message
says which comparison ran. A case rewritten alone on another machine
kind keeps that kind as its own ``platform``. Rewrite the file, after a deliberate change
of what an algorithm computes, with ``python -m tests.algos.test_fingerprints``.
"""

from __future__ import annotations

import json
import math
import platform as host
import struct
import sys
from pathlib import Path

import jax
import jaxlib
import pytest

import jaxrl
from jaxrl import algos

FINGERPRINTS = Path(__file__).with_name("fingerprints.json")
TIMED = frozenset({"env_steps_per_second"})
OTHER_MACHINE_RTOL = 1e-4
DISCRETE = dict(env="CartPole-v1", total_steps=2048)
CONTINUOUS = dict(env="Pendulum-v1", total_steps=2048)
OFF_POLICY = dict(learning_starts=256, log_interval=32, batch_size=32)


def default_case(name: str) -> dict | None:
    """An algorithm's own case from the registry, by the kit that built it (its first action
    kind's env; a rollout of 4 envs x 64 steps on-policy, `OFF_POLICY` replay for the replay
    learners); None for one that brings its own train step (it is listed in `OWN_CASES`)."""
    algorithm = algos.get(name)
    env = DISCRETE if "discrete" in algorithm.action_kinds else CONTINUOUS
    if algorithm.kit == "onpolicy":
        return dict(env, num_envs=4, num_steps=64)
    if algorithm.kit in ("offpolicy", "q_learner"):
        return dict(env, num_envs=4, **OFF_POLICY)
    return None


# name -> (algo, train keywords): the cases beside each algorithm's default one (an algorithm
# with its own train step, another code path, an env of its other kind); small but every update
# path runs at least twice
OWN_CASES: dict[str, tuple[str, dict]] = {
    "ppo-continuous": ("ppo", dict(CONTINUOUS, num_envs=4, num_steps=64)),
    "ppo-gru": ("ppo", dict(DISCRETE, num_envs=4, num_steps=64, rnn="gru")),
    "trpo": ("trpo", dict(CONTINUOUS, num_envs=4, num_steps=64)),
    "dqn-rainbowish": ("dqn", dict(DISCRETE, num_envs=4, n_step=3, prioritized=True,
                                   dueling=True, **OFF_POLICY)),
    "pqn": ("pqn", dict(DISCRETE, num_envs=4, num_steps=64)),
    "acer": ("acer", dict(DISCRETE, num_envs=4)),
    "bc": ("bc", dict(DISCRETE)),
    # IQN's defaults evaluate the network at 64 x (64 + 64 + 32) rows an update: 8 fractions
    # run the same code paths at a fifth of the cost
    "iqn": ("iqn", dict(DISCRETE, num_envs=4, num_quantiles=8, num_target_quantiles=8,
                        num_action_quantiles=8, embedding_dim=16, **OFF_POLICY)),
}
CASES: dict[str, tuple[str, dict]] = {
    **{name: (name, case) for name in sorted(algos.BUILT_IN)
       if (case := default_case(name)) is not None},
    **OWN_CASES,
}
IMITATION = frozenset({"bc", "gail"})


def platform() -> dict:
    """What bit equality depends on: the JAX build, the CPU's vector extensions and the CPU
    itself (XLA compiles for the host it runs on: DQN's and QR-DQN's gradient norms differed in
    their last bits between an AMD EPYC host and the one that wrote the file, with the same
    extensions)."""
    flags: list[str] = []
    cpu: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "flags" and not flags:
                flags = sorted(f for f in value.split() if f.startswith(("avx", "fma", "amx")))
            elif key in ("vendor_id", "model name") and key not in cpu:
                cpu[key] = value.strip()
    except OSError:
        pass
    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "machine": host.machine(),
            "vector_extensions": flags, "cpu": " ".join(cpu.get(k, "") for k in
                                                        ("vendor_id", "model name")).strip()}


def fingerprint(case: str, demos: str | None = None) -> dict:
    """``{"metrics": {name: [hex per (seed, update) row]}, "final_eval_return": [hex per seed]}``
    of one case, trained in memory with root seed 0."""
    algo, keywords = CASES[case]
    extra = {"demos": demos} if algo in IMITATION else {}
    result = jaxrl.train(algo, seeds=2, store=False, progress=False, seed=0, eval_episodes=2,
                         **keywords, **extra)
    rows = result.metrics.sort_values(["seed", "update"])
    metrics = {name: [exact(v) for v in rows[name]]
               for name in sorted(rows.columns) if name not in TIMED}
    return {"metrics": metrics, "final_eval_return": [exact(v) for v in result.final_eval_return]}


def exact(value) -> str:
    """A float64's exact text: ``float.hex`` without the mantissa's trailing zeros
    (``0x1.2p+3``; `float.fromhex` reads it back)."""
    text = float(value).hex()
    if "p" not in text or "." not in text:
        return text  # nan, inf
    mantissa, exponent = text.split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}"


def same_bits(x: float, y: float) -> bool:
    return struct.pack("<d", x) == struct.pack("<d", y) or (math.isnan(x) and math.isnan(y))


def differences(want: dict, got: dict, rtol: float) -> list[str]:
    """One line per value that differs (beyond ``rtol``; 0 = bit for bit). At ``rtol > 0``
    (another machine kind) only each seed's first update is compared: a few updates of RL
    amplify a reordered float sum past any tolerance (measured: 6 of 17 cases drift past 1e-4
    by their later updates on an AVX-512 machine, with the code unchanged)."""
    out: list[str] = []
    if sorted(want["metrics"]) != sorted(got["metrics"]):
        out.append(f"metric names: {sorted(want['metrics'])} != {sorted(got['metrics'])}")
    named = {f"metric {k}": v for k, v in want["metrics"].items()}
    found = {f"metric {k}": v for k, v in got["metrics"].items()}
    if rtol == 0:
        named["final_eval_return"] = want["final_eval_return"]
        found["final_eval_return"] = got["final_eval_return"]
    seeds = len(want["final_eval_return"])
    for name, values in named.items():
        if name not in found:
            continue
        if len(values) != len(found[name]):
            out.append(f"{name}: {len(values)} rows != {len(found[name])}")
            continue
        for row, (a, b) in enumerate(zip(values, found[name], strict=True)):
            if rtol and row % (len(values) // seeds):
                continue  # not a seed's first update
            x, y = float.fromhex(a), float.fromhex(b)
            same = same_bits(x, y) if rtol == 0 else (
                math.isclose(x, y, rel_tol=rtol, abs_tol=rtol) or (math.isnan(x) and math.isnan(y)))
            if not same:
                out.append(f"{name} row {row}: {x!r} != {y!r}")
    return out


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(FINGERPRINTS.read_text())


def demos_for(case: str, request) -> str | None:
    if CASES[case][0] not in IMITATION:
        return None
    return request.getfixturevalue("cartpole_expert")[2]


@pytest.mark.parametrize("case", sorted(CASES))
def test_metrics_on_fixed_seeds_are_unchanged(case, recorded, request):
    assert case in recorded["cases"], f"{case} has no fingerprint: rewrite fingerprints.json"
    written_on = recorded["cases"][case].get("platform", recorded["platform"])
    same_machine = written_on == platform()
    rtol = 0.0 if same_machine else OTHER_MACHINE_RTOL
    found = differences(recorded["cases"][case], fingerprint(case, demos_for(case, request)), rtol)
    how = "bit for bit" if same_machine else (
        f"at rtol {rtol} (written on {written_on}, running on {platform()})")
    assert not found, f"{case}: {len(found)} values differ, compared {how}:\n" + "\n".join(
        found[:20])


def test_every_built_in_algorithm_has_a_case():
    assert {algo for algo, _ in CASES.values()} == set(jaxrl.algos.BUILT_IN)


def write(cases: list[str]) -> None:
    """Record the named cases (all when empty) into ``fingerprints.json``; the demonstrations
    the imitation cases learn from are made as the test fixture makes them."""
    import tempfile

    from tests.conftest import make_cartpole_expert

    old = json.loads(FINGERPRINTS.read_text()) if FINGERPRINTS.exists() else {"cases": {}}
    elsewhere = old.get("platform", platform()) != platform()
    if elsewhere and not cases:
        old = {"cases": {}, "platform": platform()}  # all cases anew, on this machine kind
    with tempfile.TemporaryDirectory() as scratch:
        demos = make_cartpole_expert(Path(scratch))[2]
        for case in cases or sorted(CASES):
            old["cases"][case] = fingerprint(case, demos)
            if elsewhere and cases:  # a few cases on another machine kind: each says where
                old["cases"][case]["platform"] = platform()
            print(f"recorded {case}", flush=True)
    old.setdefault("platform", platform())
    FINGERPRINTS.write_text(dumps(old))


def dumps(recorded: dict) -> str:
    """The file's text: one line per metric, so a diff shows which metrics moved."""
    cases = {}
    for case, found in sorted(recorded["cases"].items()):
        rows = [f'  "{name}": {json.dumps(values)}' for name, values in found["metrics"].items()]
        where = (f'"platform": {json.dumps(found["platform"], sort_keys=True)}, '
                 if "platform" in found else "")
        cases[case] = ('{' + where + '"final_eval_return": '
                       + json.dumps(found["final_eval_return"])
                       + ', "metrics": {\n' + ",\n".join(rows) + "}}")
    body = ",\n".join(f'"{case}": {text}' for case, text in cases.items())
    return ('{"platform": ' + json.dumps(recorded["platform"], sort_keys=True)
            + ',\n"cases": {\n' + body + "}}\n")


if __name__ == "__main__":
    write(sys.argv[1:])
