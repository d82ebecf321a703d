"""Classic control: jaxrl's presets tuned for one task, CleanRL's DQN and RL Baselines3 Zoo's
Acrobot DQN (the figures the classic suite holds DQN to)."""

from __future__ import annotations

from jaxrl.algos.references.preset import NO_CLIP, Preset, sourced

# -- jaxrl's tuned presets for one task ---------------------------------------------------------
PPO_MOUNTAINCAR = Preset(
    "ppo", "MountainCarContinuous-v0",
    "jaxrl's PPO for MountainCarContinuous-v0: the continuous-control defaults with RL Baselines3 "
    "Zoo's discount (no gSDE: jaxrl has none)",
    sourced("RL Baselines3 Zoo hyperparams/ppo.yml, MountainCarContinuous-v0 (gamma 0.9999). "
          "Measured at the zoo's 20k steps (final deterministic evaluation): 19 of 20 seeds "
          "above 90 (one at -6.9); at the family's gamma of 0.9, 0 of 4 (the goal's +100 is too "
          "far off to pull the policy away from standing still)", gamma=0.9999),
    base="family")

SAC_MOUNTAINCAR_OU = Preset(
    "sac", "MountainCarContinuous-v0",
    "jaxrl's SAC for MountainCarContinuous-v0: the continuous-control defaults exploring with "
    "Ornstein-Uhlenbeck noise in place of the zoo's gSDE (jaxrl has none)",
    {**sourced("correlated exploration (pink/red-noise SAC; the zoo's SAC uses gSDE for it): the "
             "standard normal draw of the behaviour sample tanh(mean + std z) is an OU process, "
             "reset at episode ends (jaxrl.ops.noise)", action_noise="ou"),
     **sourced("jaxrl, measured (benchmarks/experiments-cpu/sac_mountaincar_noise.json): a "
             "correlation of exp(-2 x 0.01) = 0.98 per step (~50 steps, a swing of the car) "
             "solved it on 8 of 8 seeds (final deterministic evaluation 94.4-95.1, the zoo's 50k "
             "steps); baselines' theta 0.15 (~670 steps: one push a whole episode) on 2 of 8, "
             "white noise on 0 of 8", ou_theta=2.0, ou_dt=0.01)},
    base="family")

# -- CleanRL, the classic-control DQN figure the classic suite holds DQN to ----------------------
_CLEANRL_DQN = "CleanRL dqn.py argument defaults"

DQN_CLEANRL_CLASSIC = Preset(
    "dqn", "CartPole-v1",
    "CleanRL's dqn.py (its CartPole-v1 benchmark, 500k steps): vanilla DQN, a hard target copy "
    "every 500 env steps, epsilon decayed over half the run",
    {**sourced(_CLEANRL_DQN + " (train-frequency 10 on 1 env): one update of batch 128 per 10 env "
             "steps, here 10 envs stepped once per update", num_envs=10, gradient_steps=1,
             batch_size=128),
     **sourced(_CLEANRL_DQN, buffer_size=10_000, learning_starts=10_000, learning_rate=2.5e-4,
             gamma=0.99, eps_start=1.0, eps_end=0.05, eps_decay_fraction=0.5),
     **sourced(_CLEANRL_DQN + " (tau 1, target-network-frequency 500 env steps = 50 updates)",
             tau=1.0, target_update_period=50),
     **sourced("CleanRL dqn.py QNetwork: Linear 120, ReLU, Linear 84, ReLU", hidden=(120, 84),
             activation="relu", dueling=False),
     **sourced("CleanRL dqn.py: the target's max over the target net (no double Q), "
             "F.mse_loss, torch Adam (epsilon 1e-8), no gradient clipping", double_q=False,
             loss="mse", optimizer="adam", adam_eps=1e-8, max_grad_norm=NO_CLIP,
             anneal_lr=False),
     **sourced(_CLEANRL_DQN + ": one-step targets from a uniform buffer", n_step=1,
             prioritized=False),
     **sourced("CleanRL dqn.py: SB3's ReplayBuffer(handle_timeout_termination=True) keeps a "
             "time-limit end bootstrapped", bootstrap_truncation=True)},
    absent=("1 env stepped 10 times between updates: jaxrl steps 10 envs once per update (the "
            "same 10 new transitions per update, from 10 episodes at a time)",))

# -- RL Baselines3 Zoo, the classic-control DQN figure (Acrobot) -------------------------------
_ZOO_DQN = "RL Baselines3 Zoo hyperparams/dqn.yml, Acrobot-v1 (tuned)"
_SB3_DQN = "SB3 DQN: the target's max over the target net (no double Q), smooth L1 loss, Adam, " \
           "clip_grad_norm_ 10, MlpPolicy ReLU 64x64"

DQN_ZOO_ACROBOT = Preset(
    "dqn", "Acrobot-v1",
    "RL Baselines3 Zoo's tuned DQN for Acrobot-v1 (SB3 DQN): batch 512, 4 updates per 16 env "
    "steps, a hard target copy every 5,000 env steps, epsilon 1 -> 0.11 over 6% of the run (the "
    "zoo trains 150k steps; its benchmark figure, like the classic suite, is at 100k)",
    {**sourced(_ZOO_DQN + " (train_freq 16, gradient_steps 4 on 1 env): 4 updates per 16 env "
             "steps, here 16 envs stepped once per round of 4 updates", num_envs=16,
             gradient_steps=4),
     **sourced(_ZOO_DQN, batch_size=512, buffer_size=100_000, learning_starts=0,
             learning_rate=2.5e-4, gamma=0.99, eps_start=1.0, eps_end=0.11,
             eps_decay_fraction=0.06),
     **sourced(_ZOO_DQN + " (tau 1, target_update_interval 5,000 env steps = 1,250 updates at "
             "4 per 16 steps)", tau=1.0, target_update_period=1250),
     **sourced(_SB3_DQN, double_q=False, dueling=False, loss="huber", optimizer="adam",
             adam_eps=1e-8, max_grad_norm=10.0, anneal_lr=False, hidden=(64, 64),
             activation="relu", n_step=1, prioritized=False),
     **sourced("SB3's ReplayBuffer(handle_timeout_termination=True) keeps a time-limit end "
             "bootstrapped", bootstrap_truncation=True)},
    absent=("1 env stepped 16 times between rounds of updates: jaxrl steps 16 envs once per "
            "round (the same 16 new transitions per 4 updates, from 16 episodes at a time)",))
