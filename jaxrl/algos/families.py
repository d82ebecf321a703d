"""Each env family's default hyperparameters, declared once per family.

An algorithm's default config for an env (``default_config(env_name)``, what ``jaxrl config``
prints) is its config class built from `family_defaults`: the entry of the env's family
(`envs.env_family`) for that algorithm, or, where the family names none for it, the classic-
control one (`CLASSIC`). An entry is a whole config's worth of fields that differ from the
config class's own defaults, not a patch on the classic entry. Two algorithms build on
another's defaults and name only what they change: GAIL on PPO's (its ``gail`` entries), TD3
on DDPG's (its switches, in `jaxrl.algos.td3`, in every family).

The families themselves are the rows of `envs.families`. The built-in families' tables are
here, beside the references they cite; a suite's family (Playground, ...) carries its defaults
in its own row, and `FAMILY_DEFAULTS` takes them from there. Tuning an algorithm for a family
is one entry. ``tests/algos/test_defaults.py`` holds every algorithm's resolved defaults for
every family.
"""

from __future__ import annotations

from typing import Any

from envs import families
from envs.registry import env_family
from jaxrl.algos.references import VEL_ATARI

Fields = dict[str, Any]  # config field -> value
Table = dict[str, Fields]  # algorithm -> its fields in one family

# the probe ladder: small, fast settings, gamma 0.9 so answers are well separated
_ON_POLICY_PROBE: Fields = dict(num_envs=16, num_steps=16, gamma=0.9, hidden=(32, 32),
                                anneal_lr=False)
_REPLAY_PROBE: Fields = dict(num_envs=4, buffer_size=4096, batch_size=64, learning_starts=256,
                             log_interval=32, hidden=(32, 32), gamma=0.9)
# DDPG/TD3 (and SAC's replay settings). Classic control: 64x64 MLPs. 256x256 (the MuJoCo
# default) costs ~16x the FLOPs per update, which on a CPU makes 16 seeds x 50k updates take
# hours.
_REPLAY_CLASSIC: Fields = dict(num_envs=1, buffer_size=50_000, batch_size=256,
                               learning_starts=1_000, log_interval=200, hidden=(64, 64))
_REPLAY_BRAX: Fields = dict(num_envs=16, buffer_size=1_000_000, batch_size=256,
                            learning_starts=10_000, gradient_steps=8, log_interval=50)

_DQN_PROBE: Fields = dict(num_envs=8, buffer_size=4096, batch_size=64, learning_starts=256,
                          log_interval=16, gradient_steps=2, hidden=(32, 32), gamma=0.9,
                          learning_rate=3e-3, target_update_period=1, tau=0.05,
                          eps_decay_fraction=0.3)

PROBE: Table = {
    "ppo": {**_ON_POLICY_PROBE, "ent_coef": 0.0, "learning_rate": 3e-3},
    "vpg": {**_ON_POLICY_PROBE, "learning_rate": 1e-2, "vf_learning_rate": 3e-3},
    # small batches need the annealed LR to settle (constant LR left values +-0.06 off)
    "a2c": {**_ON_POLICY_PROBE, "ent_coef": 0.0, "learning_rate": 3e-3, "num_envs": 4,
            "num_steps": 4, "anneal_lr": True},
    "trpo": {**_ON_POLICY_PROBE, "max_kl": 0.05, "vf_learning_rate": 3e-3},
    "dqn": _DQN_PROBE,
    "ddpg": {**_REPLAY_PROBE, "actor_lr": 3e-3, "critic_lr": 3e-3, "tau": 0.02},
    "sac": {**_REPLAY_PROBE, "actor_lr": 3e-3, "critic_lr": 3e-3, "alpha_lr": 3e-3,
            "tau": 0.02, "init_alpha": 0.1},
    # DQN's probe settings; the support covers every rung's values (-1 to 10) with room, 21
    # atoms 1 apart (51 pass as well, at 1.6x the time)
    "c51": dict(_DQN_PROBE, num_atoms=21, v_min=-5.0, v_max=15.0),
    "qrdqn": dict(_DQN_PROBE, num_quantiles=8),
    # a rung's returns are nearly point masses: 4 fractions each pass every rung (values within
    # 0.01 of the answer), at a quarter of 16's cost (an update evaluates the network at batch x
    # (N + N' + K) rows: IQN's ladder took 105 s of the suite with 16, 37 s with 4)
    "iqn": dict(_DQN_PROBE, num_quantiles=4, num_target_quantiles=4, num_action_quantiles=4,
                embedding_dim=8),
    # RAdam's rectified early steps are small: the truncation rung's V = 10 (through the
    # LayerNorm's biases at the zero observation) takes lr 1e-2 and 32 steps per rollout
    "pqn": dict(num_envs=16, num_steps=16, update_epochs=4, num_minibatches=8, hidden=(32, 32),
                gamma=0.9, learning_rate=1e-2, anneal_lr=False, eps_decay_fraction=0.3),
    # the zero-observation rungs learn V through the output bias alone: enough steps for a
    # value of 1 / (1 - 0.9) = 10 take lr 1e-2 and 8 replayed updates per rollout
    "acer": dict(num_envs=16, num_steps=8, buffer_segments=256, replay_start=32,
                 replay_batch=16, replay_ratio=8, gamma=0.9, hidden=(32, 32), learning_rate=1e-2),
}

# Classic control (CartPole, Acrobot, ...): the "discrete" family, and every family's defaults
# for an algorithm it names none for.
CLASSIC: Table = {
    # No obs normalization. As the policy improves the state distribution narrows, the running
    # variance shrinks and the inputs drift under a fixed policy; on CartPole-v1 (8 seeds, 500k
    # steps) that took PPO's eval IQM from 500 to 267.
    "ppo": dict(normalize_obs=False),
    "vpg": dict(num_envs=8, num_steps=128, learning_rate=3e-3, vf_learning_rate=3e-3,
                normalize_obs=False, value_epochs=5, value_minibatches=4),
    "a2c": dict(normalize_obs=False),
    "trpo": dict(num_envs=8, num_steps=128, normalize_obs=False, max_kl=0.01,
                 vf_learning_rate=3e-3),
    # On CartPole-v1 (200k steps) hard target copies every 500 updates gave IQM 386 over 16
    # seeds and Polyak 0.005 per update 172 (8 seeds); a slow Polyak target once per env-step
    # round (tau 0.01 every 5 updates), squared loss, SiLU and a short exploration phase gave
    # 500 on 7 of 8 seeds.
    "dqn": dict(num_envs=10, buffer_size=50_000, batch_size=100, learning_starts=1_000,
                gradient_steps=5, log_interval=50, learning_rate=1e-3, target_update_period=5,
                tau=0.01, loss="mse", activation="silu", eps_decay_fraction=0.1, eps_end=0.05),
    "ddpg": _REPLAY_CLASSIC,
    "sac": _REPLAY_CLASSIC,
    # CleanRL's c51.py: 101 atoms on [-100, 100], 120x84 MLP, Adam 2.5e-4 (eps 0.01/128),
    # batch 128, a 10k replay, 10k random steps, one update per 10 env steps (here 10 envs x
    # 1 update per round), a hard target copy every 500 env steps (50 updates), eps 1 -> 0.05
    # over half the run, no double Q (the target net selects and evaluates)
    "c51": dict(num_envs=10, gradient_steps=1, buffer_size=10_000, batch_size=128,
                learning_starts=10_000, log_interval=50, hidden=(120, 84), num_atoms=101,
                v_min=-100.0, v_max=100.0, learning_rate=2.5e-4, adam_eps=0.01 / 128,
                target_update_period=50, tau=1.0, double_q=False, eps_end=0.05,
                eps_decay_fraction=0.5),
    # CleanRL has no QR-DQN: RL Baselines3 Zoo's tuned CartPole-v1 entry (qrdqn.yml, for
    # sb3-contrib's QR-DQN): 10 quantiles, 256x256 MLP, Adam 2.3e-3 (eps 0.01/64, as
    # sb3-contrib sets it), batch 64, a 100k replay, 1k random steps, 128 updates per 256 env
    # steps (here 16 envs x 8 updates per round), eps 1 -> 0.04 over 16% of the run, no double
    # Q. Its target copy every 10 env steps happens while the net is not learning, so the target
    # is the online net as each 128-update phase starts: a copy every 128 updates here.
    "qrdqn": dict(num_envs=16, gradient_steps=8, buffer_size=100_000, batch_size=64,
                  learning_starts=1_000, log_interval=16, hidden=(256, 256), num_quantiles=10,
                  learning_rate=2.3e-3, adam_eps=0.01 / 64, target_update_period=128, tau=1.0,
                  double_q=False, eps_end=0.04, eps_decay_fraction=0.16),
    # Neither CleanRL nor the Zoo has IQN: QR-DQN's Zoo entry above with 16 fractions each for
    # the loss (N, N') and for acting (K) and a 64x64 MLP. An IQN update evaluates the network
    # on B (N + N' + K) rows where QR-DQN's evaluates B: with the paper's 64/64/32 on 256x256
    # layers, 16 seeds had not finished their first chunk of 50 updates in 10 minutes here.
    # At a constant learning rate the greedy policy swung between 500 and ~100 from one
    # evaluation to the next (16 seeds x 100k steps: 12 of 16 at 500 at the end, 15 of 16
    # at 50k); the rate is annealed to 0 so that the policy the run ends with settles
    "iqn": dict(num_envs=16, gradient_steps=8, buffer_size=100_000, batch_size=64,
                learning_starts=1_000, log_interval=16, hidden=(64, 64), num_quantiles=16,
                num_target_quantiles=16, num_action_quantiles=16, learning_rate=2.3e-3,
                anneal_lr=True, adam_eps=0.01 / 64, target_update_period=128, tau=1.0,
                double_q=False, eps_end=0.04, eps_decay_fraction=0.16),
    # purejaxql's config/alg/pqn_cartpole.yaml: 32 envs x 64 steps, 4 epochs of 16 minibatches,
    # 256x256 MLP with LayerNorm, RAdam 1e-4 annealed to 0, gradients clipped at 10, rewards
    # x 0.1, gamma 0.99, lambda 0.95, eps 1 -> 0.2 over the first 20% of the run
    "pqn": dict(num_envs=32, num_steps=64, update_epochs=4, num_minibatches=16,
                hidden=(256, 256), learning_rate=1e-4, anneal_lr=True, max_grad_norm=10.0,
                reward_scale=0.1, gamma=0.99, q_lambda=0.95, eps_start=1.0, eps_end=0.2,
                eps_decay_fraction=0.2),
}

# Pendulum-like classic control: short horizon, many epochs
CONTINUOUS: Table = {
    "ppo": dict(num_envs=8, num_steps=256, update_epochs=10, num_minibatches=16, gamma=0.9,
                gae_lambda=0.95, learning_rate=1e-3, ent_coef=0.0, normalize_reward=True,
                clip_value_loss=False),
    "vpg": dict(num_envs=8, num_steps=256, gamma=0.9, gae_lambda=0.95, learning_rate=3e-3,
                vf_learning_rate=3e-3, value_epochs=10, value_minibatches=16,
                normalize_reward=True),
    # Pendulum, 4 seeds x 1M steps: lr 7e-4 stayed near random (IQM -1003 on 8 seeds); lr 3e-3
    # with standardized advantages reached IQM -203.
    "a2c": dict(num_envs=16, num_steps=8, gamma=0.9, gae_lambda=0.9, ent_coef=0.0,
                learning_rate=3e-3, normalize_advantages=True, normalize_reward=True),
    "trpo": dict(num_envs=8, num_steps=256, gamma=0.9, gae_lambda=0.95, max_kl=0.01,
                 vf_learning_rate=3e-3, value_epochs=10, value_minibatches=16,
                 normalize_reward=True),
    # on PPO's: the ``airl`` reward. On Pendulum-v1 (25 expert episodes, 8 seeds x 2M steps) it
    # reached an IQM of -242 against -366 with ``gail``'s. Discrete classic control keeps
    # ``gail``'s positive reward, which pays for surviving, as CartPole's does.
    "gail": dict(reward="airl"),
}

MINATAR: Table = {
    "ppo": dict(num_envs=64, num_steps=128, update_epochs=4, num_minibatches=8,
                learning_rate=5e-3 / 10, hidden=(256, 256), activation="relu"),
    "vpg": dict(num_envs=64, num_steps=64, hidden=(256, 256), activation="relu",
                learning_rate=1e-3, normalize_reward=False),
    "a2c": dict(num_envs=64, num_steps=5, hidden=(256, 256), ent_coef=0.01, activation="relu",
                normalize_reward=False),
    "trpo": dict(num_envs=64, num_steps=64, hidden=(256, 256), activation="relu",
                 normalize_reward=False),
    "dqn": dict(num_envs=16, buffer_size=100_000, batch_size=64, learning_starts=5_000,
                gradient_steps=4, hidden=(256, 256), learning_rate=2.5e-4,
                target_update_period=1000, eps_decay_fraction=0.2, eps_end=0.01),
    "acer": dict(hidden=(256, 256)),  # A2C's MinAtar widths
    # DQN's MinAtar replay and exploration; C51 with the classic preset's support (MinAtar's
    # rewards are not clipped: CleanRL's 101 atoms on +-100), QR-DQN with its paper's 200
    # quantiles; both with the papers' Adam eps of 0.01 / batch size
    "c51": dict(num_envs=16, buffer_size=100_000, batch_size=64, learning_starts=5_000,
                gradient_steps=4, hidden=(256, 256), learning_rate=2.5e-4,
                target_update_period=1000, eps_decay_fraction=0.2, eps_end=0.01,
                num_atoms=101, v_min=-100.0, v_max=100.0, adam_eps=0.01 / 64),
    "qrdqn": dict(num_envs=16, buffer_size=100_000, batch_size=64, learning_starts=5_000,
                  gradient_steps=4, hidden=(256, 256), learning_rate=2.5e-4,
                  target_update_period=1000, eps_decay_fraction=0.2, eps_end=0.01,
                  num_quantiles=200, adam_eps=0.01 / 64),
    # IQN: QR-DQN's MinAtar settings with the paper's fractions (N = N' = 64, K = 32)
    "iqn": dict(num_envs=16, buffer_size=100_000, batch_size=64, learning_starts=5_000,
                gradient_steps=4, hidden=(256, 256), learning_rate=2.5e-4,
                target_update_period=1000, eps_decay_fraction=0.2, eps_end=0.01,
                adam_eps=0.01 / 64),
    # purejaxql's config/alg/pqn_minatar.yaml: 128 envs x 32 steps, 2 epochs of 32
    # minibatches, RAdam 5e-4 annealed to 0, clipped at 10, gamma 0.99, lambda 0.65, eps 1 ->
    # 0.05 over the first 10%; its network is MinAtar's (one 3x3 conv of 16, then 128 units)
    # with a LayerNorm before each ReLU: torso auto picks minatar_cnn
    "pqn": dict(num_envs=128, num_steps=32, update_epochs=2, num_minibatches=32,
                learning_rate=5e-4, anneal_lr=True, max_grad_norm=10.0, gamma=0.99,
                q_lambda=0.65, eps_start=1.0, eps_end=0.05, eps_decay_fraction=0.1),
}

_DISTRIBUTIONAL_ATARI: Fields = dict(
    num_envs=4, gradient_steps=1, batch_size=32, buffer_size=1_000_000, learning_starts=50_000,
    log_interval=250, frame_replay=True, torso="nature_cnn", double_q=False,
    target_update_period=10_000, tau=1.0, optimizer="adam", adam_eps=0.01 / 32, eps_start=1.0,
    eps_end=0.01, eps_decay_fraction=0.1)

# Reading 002's Atari settings, frames already scaled to [0, 1]: A2C, PPO, TRPO, DQN and ACER
# are vel's configurations (the runs of reading 002's Atari table; its PPO is baselines' ppo2 of
# the time), each key's source in `jaxrl.algos.references` (the presets ALGO/vel-atari).
ATARI: Table = {
    **{algo: preset.values() for algo, preset in VEL_ATARI.items()},
    # C51's paper (Bellemare et al. 2017; Dopamine's c51.gin alike): 51 atoms on [-10, 10],
    # Adam 2.5e-4 with eps 0.01/32, otherwise Nature DQN's: a 1M replay (frames kept once),
    # 50k random steps, a batch of 32 every 4 agent steps, a hard target copy every 10k
    # updates, eps 1 -> 0.01 (over 1M frames: the first 10% of a 10M-frame run), Nature CNN
    "c51": dict(_DISTRIBUTIONAL_ATARI, num_atoms=51, v_min=-10.0, v_max=10.0,
                learning_rate=2.5e-4),
    # QR-DQN's paper (Dabney et al. 2018; Dopamine's quantile.gin alike): 200 quantiles,
    # kappa 1, Adam 5e-5 with eps 0.01/32, the rest as C51's
    "qrdqn": dict(_DISTRIBUTIONAL_ATARI, num_quantiles=200, kappa=1.0, learning_rate=5e-5),
    # IQN's paper (Dabney, Ostrovski et al. 2018; Dopamine's implicit_quantile_icml.gin
    # alike): N = N' = 64, K = 32, 64 cosines, kappa 1, Adam 5e-5 with eps 0.01/32, the rest as
    # C51's
    "iqn": dict(_DISTRIBUTIONAL_ATARI, kappa=1.0, learning_rate=5e-5),
    # purejaxql's config/alg/pqn_atari.yaml: 128 envs x 32 steps, 2 epochs of 32 minibatches,
    # RAdam 2.5e-4 held constant, clipped at 10, gamma 0.99, lambda 0.65, eps 1 -> 0.001 over
    # the first 10%, the Nature CNN with a LayerNorm before each ReLU. (Its envpool games end
    # an episode at a lost life and clip rewards: env settings, not the agent's.)
    "pqn": dict(num_envs=128, num_steps=32, update_epochs=2, num_minibatches=32,
                learning_rate=2.5e-4, anneal_lr=False, max_grad_norm=10.0, gamma=0.99,
                q_lambda=0.65, eps_start=1.0, eps_end=0.001, eps_decay_fraction=0.1,
                torso="nature_cnn"),
}

BRAX: Table = {
    "ppo": dict(num_envs=64, num_steps=64, update_epochs=4, num_minibatches=32,
                hidden=(256, 256), learning_rate=3e-4, ent_coef=0.0, gamma=0.99,
                normalize_reward=True, clip_value_loss=False, max_grad_norm=0.5),
    "vpg": dict(num_envs=64, num_steps=64, hidden=(256, 256), activation="tanh",
                learning_rate=1e-3, normalize_reward=True),
    "a2c": dict(num_envs=64, num_steps=5, hidden=(256, 256), ent_coef=0.01, activation="tanh",
                normalize_reward=True),
    "trpo": dict(num_envs=64, num_steps=64, hidden=(256, 256), activation="tanh",
                 normalize_reward=True),
    "ddpg": _REPLAY_BRAX,
    "sac": _REPLAY_BRAX,
}

#: family (as `envs.env_family` names it) -> {algorithm: config fields}
FAMILY_DEFAULTS: dict[str, Table] = {
    "probe": PROBE,
    "discrete": CLASSIC,
    "continuous": CONTINUOUS,
    "minatar": MINATAR,
    "atari": ATARI,
    "brax": BRAX,
    **{f.name: {algo: dict(fields) for algo, fields in f.defaults.items()}
       for f in families.FAMILIES if f.defaults},
}


def family_defaults(algo: str, env_name: str) -> Fields:
    """The config fields algorithm ``algo`` takes on ``env_name``'s family: the family's entry
    for it, else the classic-control one, else none (the config class's own defaults)."""
    table = FAMILY_DEFAULTS.get(env_family(env_name), CLASSIC)
    return dict(table.get(algo, CLASSIC.get(algo, {})))
