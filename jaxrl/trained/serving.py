"""One seed's trained policy as a serialized JAX program (`jax.export`), to serve without
jaxrl: the program maps raw env observations ``[batch, *obs_shape]`` (any batch size) to env
actions ``[batch, *action_shape]``, with the seed's parameters and observation statistics
(normalization included) inside it, deterministic (the most probable action, or the
deterministic actor).

    result.export_policy("cartpole.jaxpolicy", seed=0)      # or load_policy(run).export_policy

    from jaxrl.trained.serving import load_exported       # checks the file, then deserializes
    serve = load_exported("cartpole.jaxpolicy")
    action = np.asarray(serve.call(obs[None].astype(np.float32)))[0]  # jax.jit(serve.call): faster

The file is one header line, ``jaxrl-policy 1 sha256=<64 hex digits>\\n``, then the bytes of
`jax.export.Exported.serialize` (the payload), whose SHA-256 the header holds. `load_exported`
refuses a file whose payload or header changed by even one byte (`ExportedPolicyError`, one
line), so a damaged file never serves actions. Anywhere with jax installed, jaxrl not needed,
the same check is four lines::

    import hashlib, jax
    header, payload = open("cartpole.jaxpolicy", "rb").read().split(b"\\n", 1)
    assert header == b"jaxrl-policy 1 sha256=" + hashlib.sha256(payload).hexdigest().encode()
    serve = jax.export.deserialize(payload)

Files exported before the header existed (the bare payload) have no checksum: `load_exported`
refuses them and says so; ``jax.export.deserialize(open(path, "rb").read())`` still loads one,
unchecked, and exporting again adds the checksum. JAX reads the payload back in later versions
within its compatibility window (about six months of releases). Recurrent policies carry memory
between calls and are not exported here.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxrl.algos import acting
from jaxrl.output_paths import check_file, file_kind
from jaxrl.runs.files import atomic_write_bytes

PLATFORMS = ("cpu", "cuda", "rocm", "tpu")  # the platforms `jax.export` knows
MAGIC = b"jaxrl-policy"
VERSION = 1
_HEADER = re.compile(rb"jaxrl-policy 1 sha256=([0-9a-f]{64})\n")


class ExportedPolicyError(ValueError):
    """An exported policy file that cannot be served: damaged, of another format, or not one.
    The message is one line naming the file."""


def export_policy(policy: acting.Policy, state: Any, obs_shape: tuple,
                  obs_dtype: Any, path: str | Path,
                  platforms: str | tuple[str, ...] = ("cpu", "cuda")) -> Path:
    """Serialize ``policy`` (an `acting.Policy`) at one seed's acting ``state`` for observations
    ``[b, *obs_shape]`` of ``obs_dtype`` to ``path`` (header and checksum: module docstring),
    runnable on each of ``platforms`` (one of `PLATFORMS`, or a sequence of them). Returns the
    path. `ValueError` (one line) for a recurrent policy or an unknown platform;
    `OutputPathError` for a ``path`` that exists and is not a regular file (a folder, a device,
    a FIFO, a socket: never replaced)."""
    if policy.recurrent:
        raise ValueError("a recurrent policy carries memory between calls; export_policy "
                         "serves feed-forward policies only")
    platforms = check_platforms(platforms)
    target = Path(path)
    check_target(target)
    key = jax.random.key(0)  # read by no deterministic policy

    def serve(obs: jax.Array) -> jax.Array:
        return policy.step(state, (), obs, key, True)[1]

    batch = jax.export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((*batch, *tuple(obs_shape)), np.dtype(obs_dtype))
    exported = jax.export.export(jax.jit(serve), platforms=platforms)(spec)
    check_target(target)  # again: exporting takes a while
    atomic_write_bytes(target, with_header(bytes(exported.serialize())))
    return target


def check_platforms(platforms: str | tuple[str, ...]) -> tuple[str, ...]:
    """``platforms`` as a tuple without repeats (a string is one platform). `ValueError` (one
    line) unless it names one or more of `PLATFORMS` and nothing else."""
    named = (platforms,) if isinstance(platforms, str) else platforms
    try:
        named = tuple(dict.fromkeys(named))
    except TypeError:  # not iterable, or unhashable items
        named = ()
    if not named or not all(isinstance(p, str) and p in PLATFORMS for p in named):
        raise ValueError(f"platforms must be one or more of {', '.join(PLATFORMS)} (a string "
                         f"names one); got {platforms!r}")
    return named


def check_target(path: Path) -> None:
    """`OutputPathError` (one line) unless the export can be written at ``path``: an existing
    ``path`` that is not a regular file (a device, FIFO, socket or folder) is never replaced
    (`jaxrl.output_paths.check_file`)."""
    check_file(path, "export_policy path")


def with_header(payload: bytes) -> bytes:
    """The file of ``payload`` (serialized `jax.export.Exported`): header line, then payload."""
    digest = hashlib.sha256(payload).hexdigest().encode()
    return MAGIC + b" %d sha256=" % VERSION + digest + b"\n" + payload


def checked_payload(data: bytes, name: str = "the exported policy") -> bytes:
    """The payload of an exported policy file's bytes ``data`` after checking its header and
    checksum. `ExportedPolicyError` (one line, naming ``name``) for anything else: a damaged
    file, another format version, a file exported before checksums, or not a policy file."""
    if not data.startswith(MAGIC + b" "):
        raise ExportedPolicyError(
            f"{name} has no jaxrl-policy header: damaged, not an exported policy, or exported "
            "before policies carried a checksum (jax.export.deserialize loads such a file "
            "unchecked; export_policy again adds the checksum)")
    version = data[len(MAGIC) + 1:].split(b" ", 1)[0]
    if version != b"%d" % VERSION:
        raise ExportedPolicyError(f"{name} is of policy format version "
                                  f"{version[:16].decode('ascii', 'replace')!r}; this jaxrl "
                                  f"reads version {VERSION} (damaged, or from a newer jaxrl)")
    match = _HEADER.match(data)
    if match is None:
        raise ExportedPolicyError(f"{name} is damaged: its header line is not "
                                  f"'jaxrl-policy {VERSION} sha256=<64 hex digits>'")
    payload = data[match.end():]
    if not hmac.compare_digest(hashlib.sha256(payload).hexdigest().encode(), match.group(1)):
        raise ExportedPolicyError(f"{name} is damaged: its SHA-256 does not match the checksum "
                                  "in its header (export it again)")
    return payload


def read_exported(data: bytes, name: str = "the exported policy") -> jax.export.Exported:
    """The `jax.export.Exported` in an exported policy file's bytes ``data``, checked first
    (`checked_payload`). `ExportedPolicyError` (one line) if it fails the check or JAX cannot
    read the checked payload (a JAX outside its compatibility window)."""
    payload = checked_payload(data, name)
    try:
        return jax.export.deserialize(bytearray(payload))
    except Exception as err:  # any failure of the flatbuffer reader
        first = (str(err).splitlines() or [type(err).__name__])[0][:200]
        raise ExportedPolicyError(f"{name}: its checksum matches but this JAX "
                                  f"({jax.__version__}) cannot read it ({first})") from None


def load_exported(path: str | Path) -> jax.export.Exported:
    """The checked `jax.export.Exported` of the exported policy file at ``path``
    (`read_exported`); ``.call(obs)`` serves it. `ExportedPolicyError` (one line) for a file that
    cannot be read, fails its checksum, or is not an exported policy."""
    name = f"exported policy {str(path)!r}"
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # a FIFO or a device would block or never end
            raise ExportedPolicyError(f"cannot read {name}: it is {file_kind(mode)}, not a "
                                      "regular file")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise ExportedPolicyError(f"cannot read {name}: {err.strerror or err}") from None
    return read_exported(data, name)
