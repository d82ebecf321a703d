"""Episode videos of a trained policy: played in one jitted loop, drawn, labelled, encoded.

    video = jaxrl.render("20261124-...", seed=0, episodes=2)   # a stored run (jaxrl.api)
    video = result.render(episodes=1, deterministic=False)     # a TrainResult
    video.save("cartpole.mp4")                                 # or .gif
    video                                                      # plays inline in Jupyter

`render_policy` plays ``episodes`` fresh episodes of one seed's policy with
`jaxrl.trained.demonstrations.play`, capturing at each step what the env's `envs.render.Renderer`
needs; each frame is then drawn on the host and labelled with the policy (deterministic or
sampled), the episode, the step and the return so far (the game's score, as the run store
reports returns). The episode's last frame is held half a second, labelled with its final
return. Encoding is imageio's: MP4 (H.264 through its bundled ffmpeg) or GIF (Pillow).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import tempfile
import warnings
from pathlib import Path

import jax
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from envs.render import Renderer, RenderError, renderer
from jaxrl.trained.demonstrations import play
from jaxrl.trained.policies import StoredPolicy

FORMATS = (".mp4", ".gif")
HOLD_SECONDS = 0.5  # the last frame of an episode stays this long


@dataclasses.dataclass
class Video:
    """``frames``: uint8 ``[T, H, W, 3]``; ``returns``/``lengths``: per episode (a return is
    NaN for an episode cut at the env's horizon); ``fps``: the playback rate."""

    frames: np.ndarray
    fps: float
    returns: list[float]
    lengths: list[int]
    deterministic: bool

    def save(self, path: str | Path) -> Path:
        """Encode to ``path`` (``.mp4`` or ``.gif``, by its suffix); returns the path."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in FORMATS:
            raise RenderError(f"cannot write {path.name!r}: videos are {' or '.join(FORMATS)}")
        import imageio.v2 as imageio  # here: 0.2 s that training, which imports this module, never needs

        with warnings.catch_warnings():  # ffmpeg runs as a subprocess: fork+exec, no JAX in it
            warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
            if suffix == ".gif":  # Pillow counts a frame's duration in milliseconds
                imageio.mimwrite(path, list(self.frames), duration=1000 / self.fps, loop=0)
            else:
                imageio.mimwrite(path, list(self.frames), fps=self.fps, codec="libx264",
                                 macro_block_size=2, quality=7, ffmpeg_log_level="error")
        return path

    def _repr_html_(self) -> str:
        """Inline in a notebook: the MP4, embedded."""
        with tempfile.TemporaryDirectory() as folder:
            data = self.save(Path(folder) / "episode.mp4").read_bytes()
        src = "data:video/mp4;base64," + base64.b64encode(data).decode()
        return f'<video controls loop autoplay muted src="{src}"></video>'


def render_policy(stored: StoredPolicy, seed: int = 0, episodes: int = 1,
                  deterministic: bool = True, key_seed: int = 0, height: int = 240) -> Video:
    """A `Video` of ``episodes`` fresh episodes of ``stored``'s seed-``seed`` policy (its mode,
    or samples with ``deterministic=False``; env and sampling keys from ``key_seed``)."""
    if int(episodes) < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    r = renderer(stored.env, stored.env_params, height)
    played = play(stored, int(seed), int(episodes), jax.random.key(key_seed), deterministic,
                  record=_capture(r))
    label = "greedy" if deterministic else "sampled"
    frames, lengths = [], []
    for e in range(int(episodes)):
        shown = _episode_frames(r, played, e, f"{label} · episode {e + 1}/{episodes}")
        frames += shown
        lengths.append(len(shown) - _hold(r))
    return Video(np.stack(frames), r.fps, [float(x) for x in played["returns"]], lengths,
                 bool(deterministic))


def _hold(r: Renderer) -> int:
    """Frames the last picture of an episode is shown for."""
    return max(1, round(HOLD_SECONDS * r.fps))


def _episode_frames(r: Renderer, played: dict, e: int, title: str) -> list[np.ndarray]:
    """Episode ``e`` of ``played`` (`play`'s arrays, ``[H, episodes, ...]``): a labelled frame
    per step taken, then the last one held, labelled with the final return."""
    steps = int(played["active"][:, e].sum())
    out = []
    for t in range(steps):
        picture = r.draw(jax.tree.map(lambda x, t=t: x[t, e], played["picked"]))
        out.append(_label(picture, f"{title} · step {t + 1} · return "
                                   f"{played['return_so_far'][t, e]:.1f}"))
    final = float(played["returns"][e])
    end = f"{title} · {steps} steps · return " + (
        "cut at the horizon" if np.isnan(final) else f"{final:.1f}")
    return out + [_label(picture, end)] * _hold(r)


def _capture(r: Renderer):
    """`play`'s record: the renderer's pick and the return before the step."""
    def record(obs, env_state, action, reward, terminated, truncated):
        picked = jax.vmap(r.capture)(env_state, obs)
        return {"picked": picked, "return_so_far": env_state.episode_return}
    return record


def _label(frame: np.ndarray, text: str) -> np.ndarray:
    """``frame`` with ``text`` on a dark band across its top, the font shrunk to fit."""
    image = Image.fromarray(frame)
    w, h = image.size
    draw = ImageDraw.Draw(image)
    size = max(6, h // 18)
    while size > 6 and draw.textlength(text, font=_font(size)) > w - size:
        size -= 1
    band = size + max(2, size // 3)
    draw.rectangle([0, 0, w, band], fill=(20, 20, 24))
    draw.text((max(2, size // 3), max(1, size // 6)), text, fill=(240, 240, 240),
              font=_font(size))
    return np.asarray(image)


@functools.cache
def _font(size: int):
    return ImageFont.load_default(size=size)
