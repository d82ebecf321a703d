"""An exported policy is checked before it serves, and exporting destroys nothing: the file
carries the SHA-256 of its program, and every one-byte corruption of it (any position, header
included), a truncation or an appended byte is a one-line `ExportedPolicyError`, never actions;
a file from before the checksum is refused and says so. `export_policy` refuses a target that
is not a regular file (a FIFO, a link to ``/dev/null``, a folder) and leaves it as it was, takes
a string as one platform and refuses an unknown one. ``jaxrl export tensorboard --out`` onto a
file or under ``/proc`` is one line with exit 2. The policy is a hand-made linear one: nothing
here trains."""

import os
import stat
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.algos import acting
from jaxrl.output_paths import OutputPathError
from jaxrl.trained import serving
from jaxrl.trained.serving import ExportedPolicyError, load_exported, read_exported
from tests.runs.test_faults import cli, one_line_error
from tests.runs.test_store_reliability import write_run

WEIGHTS = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.8
OBS = np.random.default_rng(0).normal(size=(16, 3)).astype(np.float32)


def linear_policy() -> acting.Policy:
    """A feed-forward policy whose action is the argmax of ``obs @ state``."""
    return acting.Policy(acting.no_memory, lambda s, m, o, k, d: (m, jnp.argmax(o @ s, -1)),
                         None, None)


def export(path, platforms=("cpu",)):
    return serving.export_policy(linear_policy(), jnp.asarray(WEIGHTS), (3,), np.float32, path,
                                 platforms)


def one_line(err: Exception) -> str:
    text = str(err)
    assert text and "\n" not in text, repr(text)
    return text


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> bytes:
    return export(tmp_path_factory.mktemp("exported") / "linear.jaxpolicy").read_bytes()


# -- the checksum -------------------------------------------------------------------------------
def test_an_intact_file_loads_and_serves_the_policys_actions(exported, tmp_path):
    header, payload = exported.split(b"\n", 1)
    import hashlib

    assert header == b"jaxrl-policy 1 sha256=" + hashlib.sha256(payload).hexdigest().encode()
    path = tmp_path / "p.jaxpolicy"
    path.write_bytes(exported)
    serve = load_exported(path)
    np.testing.assert_array_equal(np.asarray(serve.call(OBS)), np.argmax(OBS @ WEIGHTS, -1))
    assert serve.platforms == ("cpu",)


@pytest.mark.parametrize("flip", [0x01, 0xFF])
def test_every_one_byte_corruption_is_refused(exported, flip):
    """Every position of the file, header and payload: no corruption loads."""
    loaded = []
    for i in range(len(exported)):
        data = bytearray(exported)
        data[i] ^= flip
        try:
            read_exported(bytes(data))
        except ExportedPolicyError as err:
            one_line(err)
        else:
            loaded.append(i)
    assert not loaded, f"{len(loaded)} corrupted files loaded, at bytes {loaded[:10]}"


def test_corrupted_files_on_disk_are_refused_in_one_line(exported, tmp_path):
    """200 positions spread over the file, each corrupted to a few values, read from disk."""
    path = tmp_path / "bad.jaxpolicy"
    for i in np.linspace(0, len(exported) - 1, 200).astype(int):
        for value in {0, 0x20, 0xFF, exported[i] ^ 0x80} - {exported[i]}:
            data = bytearray(exported)
            data[i] = value
            path.write_bytes(bytes(data))
            with pytest.raises(ExportedPolicyError) as err:
                load_exported(path)
            assert str(path) in one_line(err.value)


def test_what_the_checksum_guards_against(exported):
    """Without the check, some of these corruptions deserialize (the bug this fixes)."""
    payload = exported.split(b"\n", 1)[1]
    raw_loads = 0
    for i in range(0, len(payload), 7):
        data = bytearray(payload)
        data[i] ^= 0x01
        try:
            jax.export.deserialize(data)
            raw_loads += 1
        except Exception:  # any refusal is what we count
            continue
    assert raw_loads > 0


@pytest.mark.parametrize("damage", [
    lambda d: d[:-1], lambda d: d[:40], lambda d: b"", lambda d: d + b"\0",
    lambda d: d.replace(b"sha256=", b"sha512=", 1), lambda d: d.replace(b" 1 ", b" 2 ", 1),
    lambda d: d.upper()[:87] + d[87:],
], ids=["truncated", "header-only", "empty", "appended", "other-hash", "version-2", "uppercase"])
def test_truncated_extended_or_reheaded_files_are_refused(exported, damage):
    with pytest.raises(ExportedPolicyError) as err:
        read_exported(damage(exported))
    one_line(err.value)


def test_a_file_from_before_the_checksum_is_refused_and_says_so(exported, tmp_path):
    legacy = tmp_path / "old.jaxpolicy"
    legacy.write_bytes(exported.split(b"\n", 1)[1])  # what export_policy wrote before
    with pytest.raises(ExportedPolicyError) as err:
        load_exported(legacy)
    assert "before policies carried a checksum" in one_line(err.value)
    serve = jax.export.deserialize(bytearray(legacy.read_bytes()))  # still loads, unchecked
    np.testing.assert_array_equal(np.asarray(serve.call(OBS)), np.argmax(OBS @ WEIGHTS, -1))


def test_loading_what_is_not_a_regular_file_is_one_line(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, fragment in ((fifo, "it is a FIFO"), (tmp_path, "it is a folder"),
                           (tmp_path / "missing", "No such file")):
        with pytest.raises(ExportedPolicyError) as err:
            load_exported(path)  # a FIFO would block a plain read: it is never opened
        assert fragment in one_line(err.value)


# -- the export target --------------------------------------------------------------------------
def test_exporting_onto_a_fifo_refuses_and_leaves_it(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputPathError) as err:
        export(fifo)
    assert "it is a FIFO, not a regular file" in one_line(err.value)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]  # no temp file left


def test_exporting_onto_a_link_to_a_device_refuses_and_leaves_it(tmp_path):
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    before = os.stat(os.devnull)
    with pytest.raises(OutputPathError) as err:
        export(link)
    assert "character device" in one_line(err.value)
    assert link.is_symlink() and os.readlink(link) == os.devnull
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_exporting_onto_a_folder_refuses(tmp_path):
    with pytest.raises(OutputPathError) as err:
        export(tmp_path)
    assert "it is a folder" in one_line(err.value)


@pytest.mark.parametrize("where, fragment", [
    ("missing/p.jaxpolicy", "does not exist"), ("/proc/p.jaxpolicy", "cannot create a file in"),
    ("a-file/p.jaxpolicy", "Not a directory")])
def test_exporting_where_nothing_can_be_written_is_one_line(tmp_path, where, fragment):
    (tmp_path / "a-file").write_text("keep")
    with pytest.raises(OutputPathError) as err:
        export(tmp_path / where)
    assert fragment in one_line(err.value)


def test_exporting_over_a_regular_file_replaces_it(tmp_path):
    path = tmp_path / "p.jaxpolicy"
    path.write_bytes(b"old")
    export(path)
    assert path.read_bytes().startswith(b"jaxrl-policy 1 sha256=")


# -- platforms ----------------------------------------------------------------------------------
def test_a_string_names_one_platform(tmp_path):
    assert load_exported(export(tmp_path / "p", platforms="cpu")).platforms == ("cpu",)
    assert serving.check_platforms(["cuda", "cpu", "cuda"]) == ("cuda", "cpu")


@pytest.mark.parametrize("platforms", ["gpu", ("cpu", "metal"), (), "", 3, ("cpu", None),
                                       ["cpu", ["cuda"]]])
def test_unknown_platforms_are_refused_naming_the_known_ones(tmp_path, platforms):
    with pytest.raises(ValueError) as err:
        export(tmp_path / "p", platforms=platforms)
    assert "cpu, cuda, rocm, tpu" in one_line(err.value)
    assert not (tmp_path / "p").exists()


# -- the CLI's export --out ---------------------------------------------------------------------
@pytest.fixture()
def runs(tmp_path):
    write_run(tmp_path / "runs", "run-a")
    return tmp_path / "runs"


def test_tensorboard_out_onto_a_file_is_one_line(runs, tmp_path, capsys):
    target = tmp_path / "a-file"
    target.write_text("keep")
    rc, _, err = cli(capsys, "export", "tensorboard", "run-a", "--out", target,
                     "--runs-dir", runs)
    one_line_error(rc, err, "it is a file, not a folder")
    assert target.read_text() == "keep"


@pytest.mark.parametrize("out", ["/proc/jaxrl-tb", "/proc/self/status"])
def test_tensorboard_out_under_proc_is_one_line(runs, capsys, out):
    rc, _, err = cli(capsys, "export", "tensorboard", "run-a", "--out", out, "--runs-dir", runs)
    one_line_error(rc, err, f"--out '{out}' is not writable")


def test_wandb_out_onto_a_file_is_one_line(runs, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", types.SimpleNamespace(init=None))  # never reached
    target = tmp_path / "a-file"
    target.write_text("keep")
    rc, _, err = cli(capsys, "export", "wandb", "run-a", "--out", target, "--runs-dir", runs)
    one_line_error(rc, err, "it is a file, not a folder")
    assert target.read_text() == "keep"
