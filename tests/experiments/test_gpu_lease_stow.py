"""What a loan's calls carry: `gpu_lease.sh stow` moves the CPU benches' run folders out of the
tree that travels and `unstow` brings each one back, and the tree without them leaves room
under the 64 MiB a call carries for the wheels a loan needs."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LEASE = REPO / "experiments" / "gpu_lease.sh"
CALL_LIMIT_MIB = 64.0
WHEELS_MIB = 39.6  # `gpu_lease.sh wheels`, Playground's and Navix's with the rest, 2026-12-06


def _lease(repo: Path, *args: str, stow: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "GPU_STOW": str(stow), "GPU_LEASE_DIR": str(stow) + ".w"}
    done = subprocess.run(["bash", str(repo / "experiments" / "gpu_lease.sh"), *args], cwd=repo,
                          env=env, capture_output=True, text=True, check=True)
    return done.stdout


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "experiments").mkdir(parents=True)
    shutil.copy(LEASE, root / "experiments")
    files = {"benchmarks/a-cpu/progress/run1/chunk.parquet": "1",
             "benchmarks/a-cpu/superseded/run0/run.json": "2",
             "benchmarks/b-cpu/progress-spinningup/run2/run.json": "3",
             "benchmarks/gpu-benches/progress/entry/run.json": "4",
             "benchmarks/a-cpu/report.md": "5"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
    (root / "benchmarks/a-cpu/progress/run3").mkdir()  # a run folder not committed
    (root / "benchmarks/a-cpu/progress/run3/run.json").write_text("6")
    return root


def test_stow_keeps_the_cpu_benches_run_folders_here_and_unstow_brings_each_back(repo, tmp_path):
    stow = tmp_path / "stowed"
    home = ["benchmarks/a-cpu/progress", "benchmarks/a-cpu/superseded",
            "benchmarks/b-cpu/progress-spinningup"]
    assert _lease(repo, "stay-home", stow=stow).split() == home
    _lease(repo, "stow", stow=stow)
    travels = sorted(p.relative_to(repo).as_posix() for p in (repo / "benchmarks").rglob("*")
                     if p.is_file())
    assert travels == ["benchmarks/a-cpu/report.md",
                       "benchmarks/gpu-benches/progress/entry/run.json"]
    assert (stow / "benchmarks/a-cpu/progress/run3/run.json").read_text() == "6"
    _lease(repo, "unstow", stow=stow)
    assert _git(repo, "status", "--short") == "?? benchmarks/a-cpu/progress/run3/\n"
    assert (repo / "benchmarks/a-cpu/progress/run3/run.json").read_text() == "6"
    assert not stow.exists()


def test_unstow_never_overwrites_a_folder_made_here_since(repo, tmp_path):
    stow = tmp_path / "stowed"
    _lease(repo, "stow", stow=stow)
    (repo / "benchmarks/a-cpu/progress").mkdir()
    (repo / "benchmarks/a-cpu/progress/new.json").write_text("7")
    _lease(repo, "unstow", stow=stow)
    assert (repo / "benchmarks/a-cpu/progress/new.json").read_text() == "7"
    assert (stow / "benchmarks/a-cpu/progress/run1/chunk.parquet").read_text() == "1"
    assert (repo / "benchmarks/a-cpu/superseded/run0/run.json").read_text() == "2"


def test_the_tree_that_travels_leaves_room_for_the_loans_wheels(tmp_path):
    if not (REPO / ".git").exists():
        pytest.skip("needs the repository's git view of its files")
    home = _lease(REPO, "stay-home", stow=tmp_path / "stowed").split()
    listed = _git(REPO, "ls-files", "-co", "--exclude-standard").splitlines()
    travels = [REPO / f for f in listed if not any(f.startswith(h + "/") for h in home)]
    mib = sum(p.stat().st_size for p in travels if p.is_file()) / 2**20
    assert mib + WHEELS_MIB <= CALL_LIMIT_MIB - 4, (
        f"the tree that travels is {mib:.1f} MiB: with the wheels ({WHEELS_MIB} MiB) it leaves "
        f"under 4 MiB of the {CALL_LIMIT_MIB} a call carries")
