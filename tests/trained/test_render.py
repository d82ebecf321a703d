"""Episode videos: `jaxrl render` writes playable MP4 and GIF files of stored CartPole, MinAtar
and brax runs (tiny sizes), with the frames accounting for whole episodes; `result.render`
plays inline; bad input is one line."""

import imageio.v2 as imageio
import numpy as np
import pytest
from PIL import Image

import jaxrl
from jaxrl.cli import main
from jaxrl.trained.video import HOLD_SECONDS


def _frames_in(path) -> np.ndarray:
    """The decoded frames; a GIF's are expanded by their durations (Pillow merges equal
    consecutive frames into one that lasts longer)."""
    if str(path).endswith(".gif"):
        with Image.open(path) as gif:
            frames, shortest = [], None
            for i in range(gif.n_frames):
                gif.seek(i)
                ms = gif.info["duration"]
                shortest = ms if shortest is None else min(shortest, ms)
                frames.append((np.asarray(gif.convert("RGB")), ms))
            return np.stack([f for f, ms in frames for _ in range(round(ms / shortest))])
    with imageio.get_reader(path) as reader:
        return np.stack([frame for frame in reader])  # its len() is inf: no list()


def _render(run_id, runs, out, *extra):
    return main(["render", run_id, "--runs-dir", runs, "--out", str(out), "--height", "64",
                 *extra])


def test_cartpole_videos_hold_whole_episodes(cartpole_expert, tmp_path, capsys):
    result, runs, _ = cartpole_expert
    video = jaxrl.render(result.run_id, episodes=2, height=64, runs_dir=runs)
    hold = max(1, round(HOLD_SECONDS * video.fps))
    assert len(video.frames) == sum(video.lengths) + 2 * hold
    # CartPole pays 1 a step: a return that is not the episode's length miscounts the episode
    np.testing.assert_allclose(video.returns, video.lengths)
    for suffix in ("mp4", "gif"):
        out = tmp_path / f"cartpole.{suffix}"
        assert _render(result.run_id, runs, out, "--episodes", "2") == 0
        decoded = _frames_in(out)
        assert decoded.shape == video.frames.shape, suffix
        # lossy MP4 and GIF's palette: close to the drawn frames, not equal
        assert np.abs(decoded.astype(int) - video.frames).mean() < 12, suffix
    assert "episode returns" in capsys.readouterr().out
    sampled = jaxrl.render(result.run_id, seed=1, deterministic=False, key_seed=3, height=64,
                           runs_dir=runs)
    assert not sampled.deterministic and len(sampled.frames) > hold


def test_a_result_renders_inline(cartpole_expert):
    html = cartpole_expert[0].render(height=32)._repr_html_()
    assert html.startswith("<video") and "base64," in html


@pytest.mark.parametrize("env,kwargs", [
    ("Breakout-MinAtar", {"num_envs": 2, "num_steps": 16}),
    ("brax:inverted_pendulum", {"num_envs": 2, "num_steps": 16}),
])
def test_minatar_and_brax_runs_render(env, kwargs, tmp_path):
    runs = str(tmp_path / "runs")
    # no evaluation program: one compile less (the brax step is most of each)
    result = jaxrl.train("ppo", env=env, seeds=1, total_steps=32, progress=False, runs_dir=runs,
                         eval_episodes=0, **kwargs)
    out = tmp_path / "episode.mp4"
    assert _render(result.run_id, runs, out) == 0
    frames = _frames_in(out)
    assert frames.shape[0] > 1 and frames.shape[1] == 64
    assert frames[:, 20:].std() > 1, "blank frames"


def test_bad_render_requests_are_one_line(cartpole_expert, tmp_path, capsys):
    result, runs, _ = cartpole_expert
    assert _render(result.run_id, runs, tmp_path / "x.avi") == 2
    assert _render("no-such-run", runs, tmp_path / "x.mp4") == 2
    assert _render(result.run_id, runs, "/proc/x.mp4") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("jaxrl: ") for line in err), err


def test_a_checkpoint_renders(cartpole_expert, tmp_path, capsys):
    """``jaxrl render --checkpoint FOLDER`` plays the checkpoint's policy: here the final state
    saved as a checkpoint, so the same episode as the final policy's."""
    from jaxrl.engine.checkpoint import Checkpointer

    result, runs, _ = cartpole_expert
    with Checkpointer(tmp_path / "checkpoints", async_save=False) as checkpointer:
        checkpointer.save(1, result.state, {"chunks_done": 1})
    out = tmp_path / "checkpoint.gif"
    assert _render(result.run_id, runs, out, "--checkpoint", str(tmp_path / "checkpoints")) == 0
    assert "checkpoint" in capsys.readouterr().out
    final = jaxrl.render(result.run_id, height=64, runs_dir=runs)
    assert _frames_in(out).shape == final.frames.shape
    assert _render(result.run_id, runs, out, "--checkpoint", str(tmp_path / "none")) == 2
    assert "no checkpoints folder" in capsys.readouterr().err
