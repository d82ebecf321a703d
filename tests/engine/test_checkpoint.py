"""Checkpointer: bitwise round trips, pruning, corruption fallback, partial saves, errors."""

import json
import os
import shutil
import subprocess
import sys
import warnings

import flax
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxrl.engine.checkpoint import Checkpointer, CheckpointError, CheckpointWarning


@flax.struct.dataclass
class TrainState:
    params: dict
    opt_state: optax.OptState
    keys: jax.Array
    step: jax.Array
    done: jax.Array


def make_state(seed: int) -> TrainState:
    """A small but realistic train state whose every leaf depends on `seed`.

    Values come from numpy so that building many states costs no per-op jit compiles.
    """
    rng = np.random.default_rng(seed)
    arr = lambda *shape: jnp.asarray(rng.standard_normal(shape, dtype=np.float32))
    dense = lambda n_in, n_out: {"kernel": arr(n_in, n_out), "bias": arr(n_out)}
    params = {"actor": {"dense_0": dense(16, 64), "dense_1": dense(64, 4)},
              "critic": {"dense_0": dense(16, 64), "dense_1": dense(64, 1)}}
    adam, *rest = optax.adam(1e-3).init(params)  # (ScaleByAdamState, EmptyState)
    adam = adam._replace(count=jnp.asarray(np.int32(seed + 1)),
                         mu=jax.tree.map(lambda p: arr(*p.shape), params),
                         nu=jax.tree.map(lambda p: jnp.abs(arr(*p.shape)), params))
    return TrainState(params=params, opt_state=(adam, *rest),
                      keys=jax.random.split(jax.random.key(seed), 4),
                      step=jnp.asarray(np.arange(3, dtype=np.int32) + seed),
                      done=jnp.asarray(rng.random(6) < 0.5))


def abstract(tree):
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype), tree)


def assert_bitwise_equal(got, want):
    got_leaves, got_def = jax.tree.flatten(got)
    want_leaves, want_def = jax.tree.flatten(want)
    assert got_def == want_def
    for g, w in zip(got_leaves, want_leaves):
        assert isinstance(g, jax.Array) and g.dtype == w.dtype and g.shape == w.shape
        if jax.dtypes.issubdtype(w.dtype, jax.dtypes.prng_key):
            assert jax.random.key_impl(g) == jax.random.key_impl(w)
            g, w = jax.random.key_data(g), jax.random.key_data(w)
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def data_files(step_dir):
    """Files of the `state` item of one checkpoint, biggest (array data) first."""
    files = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(step_dir, "state"))
             for f in fs]
    data = [f for f in files if os.path.basename(os.path.dirname(f)) == "d"]
    return sorted(data or files, key=os.path.getsize, reverse=True)


@pytest.mark.parametrize("async_save", [True, False])
def test_round_trip_is_bitwise(tmp_path, async_save):
    state = make_state(7)
    ckpt = Checkpointer(tmp_path / "ckpt", async_save=async_save)
    ckpt.save(7, state, {"env_steps": 1234, "note": "x", "nested": {"a": [1.5, None]}})
    ckpt.wait()
    assert ckpt.steps() == [7]
    # `like` as abstract structs (async case) or as a different concrete state (sync case)
    like = abstract(state) if async_save else make_state(99)
    step, got, meta = ckpt.restore_latest(like)
    ckpt.close()
    assert step == 7
    assert meta == {"env_steps": 1234, "note": "x", "nested": {"a": [1.5, None]}}
    assert_bitwise_equal(got, state)


def test_async_save_snapshots_the_state(tmp_path):
    host = np.arange(1000, dtype=np.float32)
    ckpt = Checkpointer(tmp_path)
    ckpt.save(1, {"x": host}, {})
    host[:] = -1.0  # mutating after save returns must not change the checkpoint
    _, got, _ = ckpt.restore_latest({"x": host})
    ckpt.close()
    assert isinstance(got["x"], np.ndarray)
    np.testing.assert_array_equal(got["x"], np.arange(1000, dtype=np.float32))


def test_steps_and_max_to_keep(tmp_path):
    ckpt = Checkpointer(tmp_path, max_to_keep=2)
    assert ckpt.steps() == [] and ckpt.restore_latest(abstract(make_state(0))) is None
    for step in (0, 10, 20, 30):
        ckpt.save(step, make_state(step), {"step": step})
    ckpt.wait()
    assert ckpt.steps() == [20, 30]
    with pytest.raises(CheckpointError, match="already exist"):
        ckpt.save(30, make_state(30), {})
    ckpt.close()
    reopened = Checkpointer(tmp_path, max_to_keep=2)
    assert reopened.steps() == [20, 30]
    step, got, meta = reopened.restore_latest(abstract(make_state(0)))
    reopened.close()
    assert step == 30 and meta == {"step": 30}
    assert_bitwise_equal(got, make_state(30))


def _flip_bytes(path):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(size // 2)
        chunk = f.read(64)
        f.seek(size // 2)
        f.write(bytes(b ^ 0xFF for b in chunk))


@pytest.mark.parametrize("damage", ["overwrite", "delete", "truncate"])
def test_corrupted_newest_falls_back_to_previous(tmp_path, damage):
    ckpt = Checkpointer(tmp_path, async_save=False)
    for step in (1, 2):
        ckpt.save(step, make_state(step), {"step": step})
    victim = data_files(tmp_path / "2")[0]
    if damage == "overwrite":
        _flip_bytes(victim)
    elif damage == "delete":
        os.remove(victim)
    else:
        os.truncate(victim, os.path.getsize(victim) // 3)
    with pytest.warns(CheckpointWarning, match="step 2") as record:
        step, got, meta = ckpt.restore_latest(abstract(make_state(0)))
    assert step == 1 and meta == {"step": 1}
    assert_bitwise_equal(got, make_state(1))
    assert all("\n" not in str(w.message) for w in record)
    # resuming from step 1 and saving step 2 again replaces the broken checkpoint
    with pytest.warns(CheckpointWarning, match="step 2.*removing"):
        ckpt.save(2, make_state(22), {"step": 22})
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        step, got, _ = ckpt.restore_latest(abstract(make_state(0)))
    ckpt.close()
    assert step == 2
    assert_bitwise_equal(got, make_state(22))


def test_corrupted_meta_is_detected(tmp_path):
    ckpt = Checkpointer(tmp_path, async_save=False)
    ckpt.save(1, make_state(1), {"lr": 0.1})
    ckpt.save(2, make_state(2), {"lr": 0.2})
    meta_file = tmp_path / "2" / "meta" / "metadata"
    meta_file.write_text(meta_file.read_text().replace("0.2", "0.3"))
    with pytest.warns(CheckpointWarning, match="step 2.*meta"):
        step, _, meta = ckpt.restore_latest(abstract(make_state(0)))
    ckpt.close()
    assert (step, meta) == (1, {"lr": 0.1})


def test_leftover_partial_checkpoints_are_ignored(tmp_path):
    ckpt = Checkpointer(tmp_path, async_save=False)
    ckpt.save(1, make_state(1), {"step": 1})
    ckpt.close()
    # what a process killed mid-save leaves: orbax's temporary directory, half written
    tmp_dir = tmp_path / "5.orbax-checkpoint-tmp"
    shutil.copytree(tmp_path / "1", tmp_dir)
    os.remove(tmp_dir / "_CHECKPOINT_METADATA")
    for f in data_files(tmp_dir)[:1]:
        os.truncate(f, 3)
    # and a step-named directory that never got its metadata
    (tmp_path / "9" / "state").mkdir(parents=True)

    ckpt = Checkpointer(tmp_path, async_save=True)
    assert ckpt.steps() == [1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        step, got, _ = ckpt.restore_latest(abstract(make_state(0)))
    assert step == 1
    assert_bitwise_equal(got, make_state(1))
    # saving over the leftovers works (the stray "9" is replaced with a warning)
    with pytest.warns(CheckpointWarning, match="step 9"):
        ckpt.save(5, make_state(5), {"step": 5})
    ckpt.wait()
    assert ckpt.steps() == [1, 5]
    step, got, _ = ckpt.restore_latest(abstract(make_state(0)))
    ckpt.close()
    assert step == 5
    assert_bitwise_equal(got, make_state(5))


def test_wrong_structure_raises(tmp_path):
    ckpt = Checkpointer(tmp_path, async_save=False)
    ckpt.save(3, make_state(3), {})
    like = abstract(make_state(0))
    wrong_shape = like.replace(params={**like.params, "actor": {
        **like.params["actor"], "dense_1": {"kernel": jax.ShapeDtypeStruct((64, 5), jnp.float32),
                                            "bias": jax.ShapeDtypeStruct((5,), jnp.float32)}}})
    with pytest.raises(CheckpointError, match=r"structure.*bias.*float32\[4\].*float32\[5\]") as err:
        ckpt.restore_latest(wrong_shape)
    assert "\n" not in str(err.value)
    with pytest.raises(CheckpointError, match="leaves"):
        ckpt.restore_latest({"only": jax.ShapeDtypeStruct((3,), jnp.float32)})
    wrong_dtype = like.replace(step=jax.ShapeDtypeStruct((3,), jnp.float32))
    with pytest.raises(CheckpointError, match="structure"):
        ckpt.restore_latest(wrong_dtype)
    ckpt.close()


def test_unwritable_directory_raises(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(CheckpointError, match="not writable") as err:
        Checkpointer(blocker / "ckpt")
    assert str(blocker / "ckpt") in str(err.value) and "\n" not in str(err.value)


def test_relative_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # orbax itself rejects relative paths; they are made absolute
    ckpt = Checkpointer(os.path.join("rel", "ckpt"), async_save=True)
    ckpt.save(1, {"x": jnp.arange(3)}, {})
    step, got, _ = ckpt.restore_latest({"x": jax.ShapeDtypeStruct((3,), jnp.int32)})
    ckpt.close()
    assert step == 1 and ckpt.directory.is_absolute()
    np.testing.assert_array_equal(got["x"], np.arange(3))


def test_meta_must_be_json(tmp_path):
    ckpt = Checkpointer(tmp_path)
    with pytest.raises(CheckpointError, match="JSON"):
        ckpt.save(1, {"x": jnp.ones(2)}, {"bad": object()})
    ckpt.close()


SHARDED_SCRIPT = r"""
import json, sys, jax, jax.numpy as jnp, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
from jaxrl.engine.checkpoint import Checkpointer
mesh = jax.make_mesh((2,), ("seed",))
sharded = NamedSharding(mesh, P("seed"))
state = {"w": jax.device_put(jnp.arange(24, dtype=jnp.float32).reshape(4, 6) / 7, sharded),
         "n": jax.device_put(jnp.arange(4, dtype=jnp.int32), sharded),
         "done": jax.device_put(jnp.array([True, False, False, True]), sharded),
         "keys": jax.device_put(jax.random.split(jax.random.key(1), 4), sharded),
         "lr": jnp.float32(2.5)}
ckpt = Checkpointer(sys.argv[1])
ckpt.save(3, state, {"devices": jax.device_count()})
ckpt.wait()
like = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding), state)
step, got, meta = ckpt.restore_latest(like)
ckpt.close()
raw = lambda x: jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x
print(json.dumps({
    "devices": jax.device_count(), "step": step, "meta": meta,
    "same_sharding": {k: got[k].sharding == state[k].sharding for k in state},
    "shards": {k: len(got[k].sharding.device_set) for k in state},
    "same_dtype": {k: got[k].dtype == state[k].dtype for k in state},
    "bitwise": {k: np.asarray(raw(got[k])).tobytes() == np.asarray(raw(state[k])).tobytes()
                for k in state}}))
"""


def test_sharded_round_trip_two_devices(tmp_path):
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2"
    env = dict(os.environ, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", SHARDED_SCRIPT, str(tmp_path / "ckpt")],
                          env=env, capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["devices"] == 2 and out["step"] == 3 and out["meta"] == {"devices": 2}
    assert all(out["same_sharding"].values()), out
    assert all(out["same_dtype"].values()), out
    assert all(out["bitwise"].values()), out
    assert out["shards"]["w"] == 2 and out["shards"]["keys"] == 2
