"""OpenAI baselines' MuJoCo PPO and TRPO, reading 002's MuJoCo table (1M steps)."""

from __future__ import annotations

from jaxrl.algos.references.preset import NO_CLIP, Preset, sourced

# -- OpenAI baselines, reading 002's MuJoCo table (1M steps) ------------------------------------
_PPO2 = "baselines ppo2/defaults.py mujoco()"
_PPO2_LEARN = "baselines ppo2/ppo2.py learn() default"
_PPO2_MODEL = "baselines ppo2/model.py"
_RUN = "baselines run.py: mujoco runs 1 env (num_env or 1) under VecNormalize"
_MLP = "baselines common/models.py mlp(): 2 layers of 64, tanh"
_DONE = "baselines' runner: a time-limit done ends the return like a termination (no bootstrap)"
_TRPO = "baselines trpo_mpi/defaults.py mujoco() and trpo_mpi/run_mujoco.py"
_TRPO_LEARN = "baselines trpo_mpi/trpo_mpi.py"

PPO_BASELINES_MUJOCO = Preset(
    "ppo", "brax:hopper",
    "OpenAI baselines' PPO2 MuJoCo configuration: the PPO-OAI row of reading 002's MuJoCo table "
    "(1M steps)",
    {**sourced(_RUN, num_envs=1, normalize_obs=True),
     **sourced(_RUN + " (ret=True: rewards scaled by the running std of the discounted return)",
             normalize_reward=True),
     **sourced(_PPO2, num_steps=2048, update_epochs=10, num_minibatches=32, gamma=0.99,
             gae_lambda=0.95, ent_coef=0.0, learning_rate=3e-4, clip_eps=0.2),
     **sourced(_PPO2 + " (lr = 3e-4 * remaining fraction; cliprange constant)", anneal_lr=True,
             anneal_clip=False),
     **sourced(_PPO2 + " (value_network='copy': a separate value MLP)", shared_network=False),
     **sourced(_MLP, hidden=(64, 64), activation="tanh"),
     **sourced("baselines common/distributions.py: logstd initialized to 0", init_log_std=0.0),
     **sourced(_PPO2_LEARN, vf_coef=0.5, max_grad_norm=0.5),
     **sourced(_PPO2_MODEL + ": Adam epsilon 1e-5", adam_eps=1e-5),
     **sourced(_PPO2_MODEL + ": the value prediction clipped by cliprange", clip_value_loss=True),
     **sourced(_PPO2_MODEL + ": advantages standardized per minibatch", normalize_advantages=True),
     **sourced(_DONE, bootstrap_truncation=False)},
    absent=("VecNormalize clips the scaled reward to +-10 (jaxrl scales it without a clip)",))

TRPO_BASELINES_MUJOCO = Preset(
    "trpo", "brax:hopper",
    "OpenAI baselines' TRPO (trpo_mpi) MuJoCo configuration: the TRPO-OAI row of reading 002's "
    "MuJoCo table (1M steps)",
    {**sourced(_TRPO + " (one env per MPI worker)", num_envs=1),
     **sourced(_TRPO + " (timesteps_per_batch)", num_steps=1024),
     **sourced(_TRPO + ": mlp(num_hidden=32, num_layers=2), MlpPolicy(hid_size=32, "
             "num_hid_layers=2), tanh", hidden=(32, 32), activation="tanh"),
     **sourced(_TRPO, max_kl=0.01, cg_iters=10, cg_damping=0.1, gamma=0.99, gae_lambda=0.98,
             vf_learning_rate=1e-3),
     **sourced(_TRPO + " (vf_iters: passes of value regression)", value_epochs=5),
     **sourced(_TRPO_LEARN + ": value minibatches of 64 (1024 / 64 = 16)", value_minibatches=16),
     **sourced(_TRPO + " (normalize_observations; ppo1 MlpPolicy's running ob_rms)",
             normalize_obs=True),
     **sourced(_TRPO_LEARN + ": no reward scaling", normalize_reward=False),
     **sourced(_TRPO_LEARN + ": Fisher-vector products on every 5th sample (arr[::5])",
             fisher_subsample=5),
     **sourced(_TRPO_LEARN + ": 10 line-search steps, halving", backtrack_iters=10,
             backtrack_coef=0.5),
     **sourced(_TRPO_LEARN + ": entcoeff default 0", ent_coef=0.0),
     **sourced(_TRPO_LEARN + ": advantages standardized over the batch",
             normalize_advantages=True),
     **sourced(_TRPO_LEARN + ": constant vf_stepsize", anneal_lr=False),
     **sourced(_TRPO_LEARN + ": no gradient clipping", max_grad_norm=NO_CLIP),
     **sourced("baselines common/mpi_adam.py: MpiAdam epsilon 1e-8", adam_eps=1e-8),
     **sourced("baselines common/distributions.py: logstd initialized to 0", init_log_std=0.0),
     **sourced(_DONE, bootstrap_truncation=False)},
    absent=("the line search accepts a step with KL up to 1.5 max_kl; jaxrl's keeps KL <= max_kl",
            "ppo1's MlpPolicy clips normalized observations to +-5; jaxrl clips them to +-10",
            "baselines' later run.py wraps every MuJoCo run in VecNormalize (rewards scaled too); "
            "the benchmark's trpo_mpi/run_mujoco.py (removed in the 2018 refactor) did not, and "
            "this preset follows it"))
