"""The progress bar shows one rate: env steps per second over all members; the bar counts one
seed's steps."""

import io

from jaxrl.engine import loop


def test_the_bar_shows_one_rate(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(loop.sys, "stderr", out)
    bar = loop.progress_bar(True, 4096, "ppo CartPole-v1 x8")
    bar.update(2048)
    bar.set_postfix_str("12,345 env-steps/s over 8 members, return 9.5")
    bar.close()
    text = out.getvalue().split("\r")[-1]
    assert "2.05k/4.10k steps per seed" in text and "12,345 env-steps/s over 8 members" in text
    assert "step/s" not in text and "it/s" not in text  # no second (per-seed) rate
