"""Frames of env states: each drawable family draws where its state says, and an env no family
draws is refused in one line. No training, no compile beyond an env reset."""

import jax
import numpy as np
import pytest

import envs
from envs.render import ACCENT, CLASSIC, RenderError, renderer


def _frame(name, height=96, **state_fields):
    env, params = envs.make(name)
    obs, state = env.reset(jax.random.key(0), params)
    if state_fields:
        state = state.replace(**state_fields)
    r = renderer(env, params, height)
    return r.draw(jax.tree.map(np.asarray, r.capture(state, obs)))


@pytest.mark.parametrize("name", CLASSIC)
def test_classic_control_frames_follow_the_state(name):
    frame = _frame(name)
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[0] == 96
    field = {"CartPole-v1": "x", "Pendulum-v1": "theta", "Acrobot-v1": "joint_angle1"}.get(
        name, "position")
    moved = _frame(name, **{field: np.float32(0.4 if field != "position" else -0.9)})
    assert (frame != moved).any(), "a different state drew the same picture"


def test_the_cartpole_pole_stands_over_the_cart():
    width = _frame("CartPole-v1", x=np.float32(0.0), theta=np.float32(0.0)).shape[1]
    for x in (-1.2, 1.2):
        frame = _frame("CartPole-v1", x=np.float32(x), theta=np.float32(0.0))
        pole = np.argwhere((frame == ACCENT).all(-1))
        assert pole.size, "no pole drawn"
        centre = width / 2 + x * width / 4.8
        assert abs(pole[:, 1].mean() - centre) < 2, (x, pole[:, 1].mean(), centre)


def test_a_minatar_cell_takes_its_channel_colour():
    env, params = envs.make("Breakout-MinAtar")
    r = renderer(env, params, 40)
    grid = np.zeros((10, 10, 4), np.float32)
    grid[2, 3, 1] = 1
    frame = r.draw(grid)
    assert frame.shape == (40, 40, 3)  # 4 pixels a cell
    cell = frame[8:12, 12:16].reshape(-1, 3)
    assert (cell == cell[0]).all() and cell[0].any()
    assert not frame[:8].any() and not frame[12:].any(), "only the set cell is coloured"


def test_an_env_no_family_draws_is_refused_in_one_line():
    env, params = envs.make("probe:value")
    with pytest.raises(RenderError, match="no renderer for env") as err:
        renderer(env, params)
    assert "\n" not in str(err.value)


def test_an_atari_frame_is_the_newest_frame_the_agent_sees():
    pytest.importorskip("ale_py")
    env, params = envs.make("atari:Pong")
    obs, state = env.reset(jax.random.key(0), params)
    r = renderer(env, params, 84)
    frame = r.draw(np.asarray(r.capture(state, obs)))
    assert frame.shape == (84, 84, 3)
    grey = np.rint(np.asarray(obs[..., -1]) * 255).astype(np.uint8)
    np.testing.assert_array_equal(frame[..., 0], grey)
