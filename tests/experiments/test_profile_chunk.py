"""experiments/profile_chunk.py: ops are told apart by the named scope they were traced under,
and every op of a trace is counted (read from its XSpace, not from the trace-viewer JSON,
which stops at 1,000,000 events)."""

import jax
import jax.numpy as jnp
import pytest

from tests.experiments.scripts import load


@pytest.fixture(scope="module")
def prof():
    return load("profile_chunk")


@pytest.mark.parametrize("op_name, kind", [
    ("jit(chunk)/while/body/vmap(env_step)/add", "env_step"),
    ("jit(eval)/evaluation/while/body/env_step/mul", "evaluation"),
    ("jit(chunk)/jvp(gradient)/dot_general", "forward"),
    ("jit(chunk)/transpose(jvp(gradient))/dot_general", "backward"),
    ("jit(chunk)/optimizer/sqrt", "optimizer"),
    ("jit(chunk)/reduce_sum", "other"),
])
def test_an_op_takes_the_category_of_its_scope(prof, op_name, kind):
    assert prof.category(op_name) == kind


def test_every_op_of_a_loop_is_counted_under_its_scope(prof, tmp_path):
    def body(i, x):
        with jax.named_scope("env_step"):
            return jnp.sin(x) * 1.0001 + i

    x = jnp.ones(65536)  # a state past XLA:CPU's small-loop size: one thunk per op and step
    program = jax.jit(lambda x: jax.lax.fori_loop(0, 200, body, x)).lower(x).compile()
    program(x).block_until_ready()
    with jax.profiler.trace(str(tmp_path)):
        program(x).block_until_ready()
    seconds, counts = prof.op_seconds(tmp_path, prof.op_categories([program.as_text()]))
    assert counts["env_step"] >= 200  # at least one op per iteration, each one counted
    assert seconds["env_step"] > 0
    assert set(counts) == set(prof.CATEGORIES)
