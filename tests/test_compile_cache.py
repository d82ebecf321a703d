"""The persistent compilation cache: a second process loads the programs the first compiled,
its results are bitwise those of the run that compiled them, and a corrupted entry is one warning line
followed by a fresh compile (and a good entry in its place)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

# One process: train PPO briefly, print where its programs came from and save its outputs.
SCRIPT = """
import json, sys, numpy as np, jax, jaxrl
r = jaxrl.train("ppo", "CartPole-v1", seeds=2, total_steps=1024, store=False, progress=False,
                num_envs=4, num_steps=32, hidden=(16,), eval_episodes=2)
leaves = [np.asarray(x) for x in jax.tree.leaves(r.state.params)]
np.savez(sys.argv[1], *leaves, metrics=r.metrics.drop(columns=["env_steps_per_second"]).to_numpy(dtype=float),
         final=r.final_eval_return)
print(json.dumps({"source": r.compile_source, "seconds": r.compile_seconds}))
"""


def _run(tmp_path: Path, name: str, cache: Path, **env) -> tuple[dict, dict, str]:
    out = tmp_path / f"{name}.npz"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_COMPILATION_CACHE")}
    environ.update(JAXRL_CACHE_DIR=str(cache), **env)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env=environ,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return info, dict(np.load(out)), proc.stderr


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_second_process_loads_from_cache_bitwise_equal_and_survives_corruption(tmp_path):
    cache = tmp_path / "cache"
    first, out_first, _ = _run(tmp_path, "first", cache)
    assert first["source"] == "compiled"
    entries = sorted(cache.glob("*-cache"))
    assert entries, "nothing was written to the cache folder"

    second, out_second, _ = _run(tmp_path, "second", cache)
    assert second["source"] == "cache"
    _same(out_first, out_second)

    for entry in entries:  # truncate every entry: each read fails to decompress
        entry.write_bytes(entry.read_bytes()[:50])
    damaged, out_damaged, stderr = _run(tmp_path, "damaged", cache)
    warnings = [line for line in stderr.splitlines() if "compilation cache" in line]
    assert warnings and all(line.startswith("jaxrl: warning: ") for line in warnings), stderr
    assert "Traceback" not in stderr
    assert damaged["source"] == "compiled"
    _same(out_first, out_damaged)

    from jax._src.compilation_cache import decompress_executable

    for entry in sorted(cache.glob("*-cache")):  # the bad entries were replaced by good ones
        decompress_executable(entry.read_bytes())


def test_switched_off_by_the_environment(tmp_path):
    """``JAXRL_COMPILE_CACHE=0`` leaves JAX's cache off and creates no folder."""
    code = ("import jax; from jaxrl import compile_cache as c; print(c.configure(), "
            "jax.config.jax_enable_compilation_cache)")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_COMPILATION_CACHE")}
    environ.update(JAXRL_CACHE_DIR=str(tmp_path / "c"), JAXRL_COMPILE_CACHE="0")
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == ["None", "False"] and not (tmp_path / "c").exists()


def test_entries_without_an_access_time_do_not_stop_later_writes(tmp_path):
    """An entry written without JAX's size bound has no access-time file; JAX's eviction scan
    then fails every later write of a bounded cache, until `heal` stamps the entry."""
    from jax._src.lru_cache import LRUCache

    from jaxrl import compile_cache

    (tmp_path / "jit_old-abc-cache").write_bytes(b"an executable")  # no jit_old-abc-atime
    bounded = LRUCache(str(tmp_path), max_size=1 << 20)
    if jax.__version_info__ < (0, 11):
        with pytest.raises(FileNotFoundError):  # JAX's eviction scan, before healing
            bounded.put("jit_new-def", b"another")
        assert compile_cache.heal(tmp_path) == 1
    else:  # jax 0.11 writes past such an entry; healing still stamps it (if JAX did not)
        bounded.put("jit_new-def", b"another")
        assert compile_cache.heal(tmp_path) <= 1
    assert compile_cache.heal(tmp_path) == 0
    bounded.put("jit_new-ghi", b"a third")
    assert bounded.get("jit_new-ghi") == b"a third" and (tmp_path / "jit_new-ghi-atime").is_file()
    assert (tmp_path / "jit_old-abc-atime").is_file()
