"""The deviceless-compile helpers without a CUDA plugin: the programs `gpu_aot` lowers (and
`gpu_hlo` reads) are the engine's, for any device; the target configuration names its GPU."""

import jax

from tests.experiments.scripts import load


def test_the_workloads_programs_lower_for_a_given_device():
    aot = load("gpu_aot")
    workload = aot.plan_workloads()["ppo-cartpole"]
    lowered = aot.lowered_programs(workload, 2, jax.devices("cpu")[0])
    assert sorted(lowered) == ["chunk", "init"]
    text = lowered["chunk"]().as_text()
    assert "jit_chunk" in text and "while" in text


def test_the_target_configuration_is_the_h200_the_loans_lend():
    aot = load("gpu_aot")
    config = aot.target_config("h200")
    assert 'device_description_str: "NVIDIA H200"' in config
    assert "cuda_compute_capability { major: 9 }" in config and "core_count: 132" in config
