"""vel's Atari configurations, reading 002's Atari table (10M agent steps): jaxrl's atari family
defaults for A2C, PPO, TRPO, DQN and ACER."""

from __future__ import annotations

from jaxrl.algos.references.preset import Keys, Preset, sourced

# -- vel, reading 002's Atari table (10M agent steps) -------------------------------------------
_VEL = "vel examples-configs/rl/atari/"
_VEL_FRAMES = ("vel image_to_tensor: frames scaled to [0, 1], no running normalization "
               "(the atari family's envs give them in [0, 1])")
_VEL_TORCH_RMSPROP = ("vel's rmsprop is torch.optim.RMSprop: epsilon outside the square root "
                      "(the convention reading 002 credits for beating baselines' TF A2C)")


def _vel(algo: str, title: str, keys: Keys, absent: tuple[str, ...] = ()) -> Preset:
    return Preset(algo, "atari:Breakout", f"vel's {title}: the {algo.upper()}-Vel row of reading "
                  "002's Atari table (10M agent steps); jaxrl's atari defaults are this preset",
                  keys, absent)


A2C_VEL_ATARI = _vel("a2c", "A2C (atari_a2c.yaml, the same in every tagged version)", {
    **sourced(_VEL_FRAMES, normalize_obs=False),
    **sourced(_VEL + "atari_a2c.yaml (parallel_envs 16, number_of_steps 5)", num_envs=16,
            num_steps=5),
    **sourced(_VEL + "atari_a2c.yaml: RMSprop lr 7e-4, alpha 0.99, epsilon 1e-3, max_grad_norm 0.5",
            optimizer="rmsprop", learning_rate=7e-4, rmsprop_decay=0.99, rmsprop_eps=1e-3,
            max_grad_norm=0.5),
    **sourced(_VEL_TORCH_RMSPROP, rmsprop_style="pytorch"),
    **sourced(_VEL + "atari_a2c.yaml: no scheduler, the lr is constant (baselines anneals it)",
            anneal_lr=False),
    **sourced(_VEL + "atari_a2c.yaml (entropy_coefficient, value_coefficient, discount_factor)",
            ent_coef=0.01, vf_coef=0.5, gamma=0.99),
    **sourced(_VEL + "atari_a2c.yaml: one Nature CNN, its output repeated for the two heads",
            torso="nature_cnn", shared_network=True)})

PPO_VEL_ATARI = _vel("ppo", "PPO (ppo/breakout_ppo.yaml; baselines' ppo2 Atari settings)", {
    **sourced(_VEL_FRAMES, normalize_obs=False),
    **sourced(_VEL + "ppo/breakout_ppo.yaml (parallel_envs 8, number_of_steps 128, "
            "experience_replay 4 epochs, batch_size 256: 4 minibatches)", num_envs=8,
            num_steps=128, update_epochs=4, num_minibatches=4),
    **sourced(_VEL + "ppo/breakout_ppo.yaml: cliprange linear from 0.1 to 0", clip_eps=0.1,
            anneal_clip=True),
    **sourced(_VEL + "ppo/breakout_ppo.yaml: Adam 2.5e-4 (epsilon 1e-5) under "
            "linear_batch_scaler", learning_rate=2.5e-4, adam_eps=1e-5, anneal_lr=True),
    **sourced(_VEL + "ppo/breakout_ppo.yaml (entropy and value coefficients, max_grad_norm, "
            "discount_factor, gae_lambda)", ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
            gamma=0.99, gae_lambda=0.95),
    **sourced(_VEL + "ppo/breakout_ppo.yaml: one Nature CNN backbone for both heads",
            torso="nature_cnn", shared_network=True)})

TRPO_VEL_ATARI = _vel("trpo", "TRPO (trpo/breakout_trpo.yaml, in place of baselines' poor one)", {
    **sourced(_VEL_FRAMES, normalize_obs=False),
    **sourced(_VEL + "trpo/breakout_trpo.yaml (parallel_envs 16, number_of_steps 32)",
            num_envs=16, num_steps=32),
    **sourced(_VEL + "trpo/breakout_trpo.yaml: a policy and a value net of nature_cnn_small "
            "(8 and 16 filters, 128 units, ReLU)", torso="nature_cnn_small", activation="relu"),
    **sourced(_VEL + "trpo/breakout_trpo.yaml (max_kl, cg_damping, cg_iters, line_search_iters, "
            "entropy_coef, discount_factor, gae_lambda)", max_kl=0.001, cg_damping=0.001,
            cg_iters=10, backtrack_iters=10, ent_coef=0.1, gamma=0.99, gae_lambda=1.0),
    **sourced("vel's TRPO: a line search halving the step; the Fisher on the whole batch",
            backtrack_coef=0.5, fisher_subsample=1),
    **sourced(_VEL + "trpo/breakout_trpo.yaml: vf_iters 3 passes, Adam 1e-4 (epsilon 1e-3)",
            value_epochs=3, value_minibatches=1, vf_learning_rate=1e-4, adam_eps=1e-3)},
    absent=("vel accepts a line-search step up to 1.5 max_kl of KL and an improvement of 0.1 of "
            "the expected (improvement_acceptance_ratio); jaxrl's keeps KL <= max_kl",))

DQN_VEL_ATARI = _vel("dqn", "Nature-like double DQN (dqn/breakout_ddqn.yaml)", {
    **sourced(_VEL + "dqn/breakout_ddqn.yaml: a batch of 32 every 4 env steps (here 4 envs x 1 "
            "update per round)", num_envs=4, gradient_steps=1, batch_size=32),
    **sourced(_VEL + "dqn/breakout_ddqn.yaml (buffer_capacity 250k, buffer_initial_size 30k, "
            "frames kept once: frame_stack_compensation)", buffer_size=250_000,
            learning_starts=30_000, frame_replay=True),
    **sourced(_VEL + "dqn/breakout_ddqn.yaml (double_dqn, a hard target copy every 10k "
            "updates, max_grad_norm, discount_factor)", double_q=True,
            target_update_period=10_000, tau=1.0, max_grad_norm=0.5, gamma=0.99),
    **sourced(_VEL + "dqn/breakout_ddqn.yaml: RMSprop lr 2.5e-4, alpha 0.95, momentum 0.95, "
            "epsilon 0.1", optimizer="rmsprop", learning_rate=2.5e-4, rmsprop_decay=0.95,
            rmsprop_momentum=0.95, rmsprop_eps=0.1),
    **sourced(_VEL_TORCH_RMSPROP, rmsprop_style="pytorch"),
    **sourced(_VEL + "dqn/breakout_ddqn.yaml: epsilon 1 -> 0.1 over the first 10% of the run",
            eps_start=1.0, eps_end=0.1, eps_decay_fraction=0.1),
    **sourced(_VEL + "dqn/breakout_ddqn.yaml: the Nature CNN", torso="nature_cnn"),
    **sourced("jaxrl: metrics averaged over 250 rounds (no bearing on learning)",
            log_interval=250)})

ACER_VEL_ATARI = _vel("acer", "ACER (acer/breakout_acer_trust_region.yaml)", {
    **sourced(_VEL + "acer/*_acer_trust_region.yaml (parallel_envs 12, number_of_steps 20)",
            num_envs=12, num_steps=20),
    **sourced(_VEL + "acer/*_acer_trust_region.yaml: 50k steps per env in replay (30k segments), "
            "replay from 10k per env (6k segments); frames kept once per segment (28 uint8 "
            "frames per 20 steps: 5.9 GB per seed, where whole stacks for obs and next obs "
            "would be 34 GB)", buffer_segments=30_000,
            replay_start=6_000, frame_replay=True),
    **sourced("vel's stochastic_experience_replay (on by default; baselines draws them so too): "
            "Poisson(4) replays per rollout of 12 segments", replay_schedule="poisson",
            replay_ratio=4, replay_batch=12),
    **sourced(_VEL + "acer/*_acer_trust_region.yaml (rho_cap, q_coefficient, "
            "entropy_coefficient, trust region, max_grad_norm, discount_factor)", c_bar=10.0,
            q_coef=0.5, ent_coef=0.01, trust_region=True, delta=1.0, max_grad_norm=10.0,
            gamma=0.99),
    **sourced(_VEL + "acer/*_acer_trust_region.yaml: RMSprop lr 7e-4, alpha 0.99, epsilon 1e-3",
            optimizer="rmsprop", learning_rate=7e-4, rmsprop_decay=0.99, rmsprop_eps=1e-3),
    **sourced(_VEL_TORCH_RMSPROP, rmsprop_style="pytorch"),
    **sourced(_VEL + "acer: one Nature CNN for the policy and Q heads", torso="nature_cnn",
            shared_network=True)})

#: vel's Atari configurations by algorithm: jaxrl's atari family defaults for these five
VEL_ATARI: dict[str, Preset] = {"a2c": A2C_VEL_ATARI, "ppo": PPO_VEL_ATARI,
                                "trpo": TRPO_VEL_ATARI, "dqn": DQN_VEL_ATARI,
                                "acer": ACER_VEL_ATARI}
