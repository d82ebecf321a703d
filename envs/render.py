"""Pictures of env states: how each family is drawn into an RGB frame.

    r = renderer(env, params, height=240)
    picked = r.capture(state, obs)          # traced, inside a jitted episode loop
    frame = r.draw(one_step_of(picked))     # host: uint8 [height, width, 3]

A `Renderer` splits drawing in two so that an episode can be played in one jitted loop:
``capture(state, obs)`` picks from the (wrapped) env state and the observation the few arrays a
picture needs (a pytree; the loop stacks it over time), and ``draw`` turns one step of them into
an image on the host. The families:

* classic control (CartPole-v1, Pendulum-v1, Acrobot-v1, MountainCar-v0,
  MountainCarContinuous-v0): drawn from the gymnax state with Pillow;
* MinAtar: the observation grid, one colour per channel, scaled up;
* brax: MuJoCo's own renderer at the state's joint positions, seen through the model's own
  camera (headless, MuJoCo needs ``MUJOCO_GL=egl`` or ``osmesa`` before it is imported:
  `envs.brax_adapter.headless_gl` sets it where no display exists); played in real time up to
  `MAX_FPS` frames a second, slower beyond;
* Atari: the newest frame of the observation's stack (what the agent sees: 84x84 grey);
* ``goal:PointReach``: the point, its goal and the tolerance circle.

Other envs raise `RenderError` (one line naming the families that can be drawn).
"""

from __future__ import annotations

import colorsys
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from PIL import Image, ImageDraw

from envs.atari import AtariEnv
from envs.brax_adapter import BraxEnv
from envs.families import family_of
from envs.wrappers import Wrapper

CLASSIC = ("CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0",
           "MountainCarContinuous-v0")
DRAWABLE = ("classic control (" + ", ".join(CLASSIC) + "), MinAtar, brax, playground:*, atari:*, "
            "goal:PointReach")

MAX_FPS = 50.0  # faster envs (brax's 125 steps a second) play slowed to this
BACKGROUND = (250, 250, 248)
INK = (40, 40, 48)
ACCENT = (204, 85, 0)
BLUE = (50, 110, 190)


class RenderError(ValueError):
    """An env that cannot be drawn, or a renderer that cannot start (one line)."""


@dataclasses.dataclass(frozen=True)
class Renderer:
    """``capture(state, obs) -> pytree`` (jax, traceable; ``state`` is the env's own state,
    wrappers included), ``draw(picked) -> uint8 [H, W, 3]`` for one step of it (numpy leaves),
    and the playback rate ``fps`` (the env's real time where it has one)."""

    capture: Callable[[Any, Any], Any]
    draw: Callable[[Any], np.ndarray]
    fps: float


def unwrapped(env, state):
    """The innermost env under the wrappers, and its state (each wrapper's ``inner_state``)."""
    while isinstance(env, Wrapper):
        if state is not None:
            state = env.inner_state(state)
        env = env.env
    return env, state


def renderer(env, params, height: int = 240) -> Renderer:
    """The `Renderer` for ``env`` (as built by ``envs.make``, wrappers allowed), frames
    ``height`` pixels high. Raises `RenderError` for an env no family here draws."""
    if int(height) < 16:
        raise RenderError(f"frame height must be at least 16 pixels, got {height}")
    height = int(height)
    inner = unwrapped(env, None)[0]
    name = getattr(inner, "name", type(inner).__name__)
    obs_changed = env.observation_space(params).shape != inner.observation_space(params).shape
    if name in CLASSIC:
        return _classic(env, name, params, height)
    if family_of(name) == "minatar" and not obs_changed:
        return Renderer(lambda state, obs: obs, lambda grid: _minatar(grid, height), 10.0)
    if isinstance(inner, AtariEnv) and not obs_changed:
        return Renderer(lambda state, obs: obs[..., -1], lambda f: _grey(f, height), 15.0)
    if isinstance(inner, BraxEnv):
        return _brax(env, inner, height)
    if name == "goal:PointReach":
        capture = lambda state, obs: _state_of(env, state)
        return Renderer(capture, lambda s: _point_reach(s, params, height), 20.0)
    raise RenderError(f"no renderer for env {name!r}; drawable: {DRAWABLE}")


def _state_of(env, state):
    return unwrapped(env, state)[1]


# -- classic control ---------------------------------------------------------------------------
def _canvas(height: int, aspect: float = 4 / 3):
    width = 2 * round(height * aspect / 2)
    image = Image.new("RGB", (width, height), BACKGROUND)
    return image, ImageDraw.Draw(image)


def _classic(env, name: str, params, height: int) -> Renderer:
    capture = lambda state, obs: _state_of(env, state)
    draw = {"CartPole-v1": _cartpole, "Pendulum-v1": _pendulum, "Acrobot-v1": _acrobot,
            "MountainCar-v0": _mountain_car, "MountainCarContinuous-v0": _mountain_car}[name]
    fps = {"CartPole-v1": 50.0, "Pendulum-v1": 20.0, "Acrobot-v1": 15.0}.get(name, 30.0)
    return Renderer(capture, lambda s: draw(s, params, height), fps)


def _cartpole(s, params, height: int) -> np.ndarray:
    image, d = _canvas(height)
    w, h = image.size
    scale = w / 4.8  # the track spans x in [-2.4, 2.4]
    ground = 0.75 * h
    cx = w / 2 + float(s.x) * scale
    cart_w, cart_h = 0.5 * scale, 0.3 * scale
    d.line([(0, ground), (w, ground)], fill=INK, width=max(1, h // 150))
    d.rectangle([cx - cart_w / 2, ground - cart_h, cx + cart_w / 2, ground], fill=INK)
    pole = 2 * 0.5 * scale  # gymnax's pole half-length is 0.5
    top = (cx + pole * math.sin(float(s.theta)), ground - cart_h - pole * math.cos(float(s.theta)))
    d.line([(cx, ground - cart_h), top], fill=ACCENT, width=max(2, int(0.08 * scale)))
    return np.asarray(image)


def _pendulum(s, params, height: int) -> np.ndarray:
    image, d = _canvas(height, aspect=1.0)
    w, h = image.size
    c, length = (w / 2, h / 2), 0.4 * h
    theta = float(s.theta)  # 0 is upright
    tip = (c[0] + length * math.sin(theta), c[1] - length * math.cos(theta))
    d.line([c, tip], fill=ACCENT, width=max(2, h // 16))
    r = max(2, h // 40)
    d.ellipse([c[0] - r, c[1] - r, c[0] + r, c[1] + r], fill=INK)
    return np.asarray(image)


def _acrobot(s, params, height: int) -> np.ndarray:
    image, d = _canvas(height, aspect=1.0)
    w, h = image.size
    scale = h / 4.4  # two links of length 1 reach 2 either way
    c = np.array([w / 2, h / 2])
    t1, t2 = float(s.joint_angle1), float(s.joint_angle2)
    p1 = c + scale * np.array([math.sin(t1), math.cos(t1)])
    p2 = p1 + scale * np.array([math.sin(t1 + t2), math.cos(t1 + t2)])
    d.line([(0, c[1] - scale), (w, c[1] - scale)], fill=BLUE, width=1)  # the goal height
    for a, b in ((c, p1), (p1, p2)):
        d.line([tuple(a), tuple(b)], fill=ACCENT, width=max(2, h // 30))
    r = max(2, h // 60)
    for p in (c, p1):
        d.ellipse([p[0] - r, p[1] - r, p[0] + r, p[1] + r], fill=INK)
    return np.asarray(image)


def _mountain_car(s, params, height: int) -> np.ndarray:
    image, d = _canvas(height, aspect=1.5)
    w, h = image.size
    lo, hi = float(params.min_position), float(params.max_position)
    x_px = lambda x: (x - lo) / (hi - lo) * w
    y_px = lambda x: h - (0.1 + 0.7 * (math.sin(3 * x) * 0.45 + 0.55)) * h
    xs = np.linspace(lo, hi, 100)
    d.line([(x_px(x), y_px(x)) for x in xs], fill=INK, width=max(1, h // 100))
    goal = float(params.goal_position)
    d.line([(x_px(goal), y_px(goal)), (x_px(goal), y_px(goal) - 0.1 * h)], fill=BLUE, width=2)
    pos, r = float(s.position), max(3, h // 25)
    cx, cy = x_px(pos), y_px(pos) - r
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=ACCENT)
    return np.asarray(image)


def _point_reach(s, params, height: int) -> np.ndarray:
    image, d = _canvas(height, aspect=1.0)
    w, h = image.size
    px = lambda p: (w / 2 + float(p[0]) * 0.45 * w, h / 2 - float(p[1]) * 0.45 * h)
    gx, gy = px(s.goal)
    tol = float(params.tolerance) * 0.45 * w
    d.rectangle([0.05 * w, 0.05 * h, 0.95 * w, 0.95 * h], outline=INK)
    d.ellipse([gx - tol, gy - tol, gx + tol, gy + tol], outline=BLUE, width=2)
    x, y = px(s.position)
    r = max(2, h // 40)
    d.ellipse([x - r, y - r, x + r, y + r], fill=ACCENT)
    return np.asarray(image)


# -- grids and frames --------------------------------------------------------------------------
def _palette(n: int) -> np.ndarray:
    """``n`` distinct bright colours, uint8 [n, 3]."""
    return np.array([[round(255 * c) for c in colorsys.hsv_to_rgb(i / n, 0.75, 0.95)]
                     for i in range(n)], np.uint8)


def _upscale(image: np.ndarray, height: int) -> np.ndarray:
    """``image [h, w, 3]`` resized to ``height`` rows (nearest neighbour: cells stay sharp),
    its width in proportion and even (as H.264 needs)."""
    width = 2 * max(1, round(height * image.shape[1] / image.shape[0] / 2))
    return np.asarray(Image.fromarray(image).resize((width, height), Image.Resampling.NEAREST))


def _minatar(grid, height: int) -> np.ndarray:
    """MinAtar's ``[10, 10, C]`` 0/1 grid: each cell the colour of its last set channel."""
    grid = np.asarray(grid) > 0.5
    colours = np.concatenate([np.zeros((1, 3), np.uint8), _palette(grid.shape[-1])])
    top = np.where(grid.any(-1), grid.shape[-1] - np.argmax(grid[..., ::-1], -1), 0)
    return _upscale(colours[top], height)


def _grey(frame, height: int) -> np.ndarray:
    """A ``[H, W]`` frame in [0, 1] as RGB."""
    g = np.clip(np.rint(np.asarray(frame) * 255), 0, 255).astype(np.uint8)
    return _upscale(np.repeat(g[..., None], 3, -1), height)


# -- brax (MuJoCo's renderer) ------------------------------------------------------------------
def _brax(env, inner, height: int) -> Renderer:
    """A brax env's or a Playground task's (a brax-style pipeline env) MuJoCo scene."""
    raw = inner.brax_env
    model = getattr(getattr(raw, "sys", None), "mj_model", None) or getattr(raw, "mj_model", None)
    if model is None:
        raise RenderError(f"brax env {inner.name!r} has no MuJoCo model to render")
    capture = lambda state, obs: jnp.asarray(_positions(_state_of(env, state).brax_state))
    scene = _MujocoScene(model, height, 2 * round(height * 4 / 3 / 2))
    step_seconds = float(inner.brax_env.dt) * inner.action_repeat
    return Renderer(capture, scene.draw, min(MAX_FPS, 1.0 / step_seconds))


def _positions(raw_state) -> jnp.ndarray:
    """The joint positions of a brax state (``pipeline_state.q``) or a Playground one
    (``data.qpos``)."""
    pipeline = getattr(raw_state, "pipeline_state", None)
    return pipeline.q if pipeline is not None else raw_state.data.qpos


class _MujocoScene:
    """One offscreen MuJoCo renderer, created on first use, looking through the model's first
    camera (or, where it has none, a camera tracking body 1)."""

    def __init__(self, model, height: int, width: int):
        self.model, self.height, self.width = model, height, width
        self._renderer = None

    def _start(self):
        import mujoco

        self.model.vis.global_.offwidth = max(self.model.vis.global_.offwidth, self.width)
        self.model.vis.global_.offheight = max(self.model.vis.global_.offheight, self.height)
        try:
            self._renderer = mujoco.Renderer(self.model, self.height, self.width)
        except Exception as err:  # no OpenGL context: name the fix, in one line
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise RenderError(
                f"MuJoCo's renderer could not start ({first}); headless machines need "
                f"MUJOCO_GL=egl or MUJOCO_GL=osmesa set before mujoco/brax is imported") from None
        self._data = mujoco.MjData(self.model)
        if self.model.ncam > 0:  # the model's own camera (brax's locomotion tasks track the torso)
            self._camera = 0
        else:  # a free camera following body 1 from the side
            self._camera = mujoco.MjvCamera()
            self._camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self._camera.trackbodyid = 1 if self.model.nbody > 1 else 0
            self._camera.distance = 1.6 * float(self.model.stat.extent)
            self._camera.elevation = -10.0
            self._camera.azimuth = 90.0
        self._mujoco = mujoco

    def draw(self, q) -> np.ndarray:
        if self._renderer is None:
            self._start()
        self._data.qpos[:] = np.asarray(q, np.float64)
        self._mujoco.mj_forward(self.model, self._data)
        self._renderer.update_scene(self._data, camera=self._camera)
        return np.array(self._renderer.render())
