"""Named presets: a reference's own configuration, or a preset jaxrl tuned for one task, each
config key's value with where it comes from.

A preset is written out as ``presets/ALGO/NAME.yaml`` (`jaxrl.cli.discover.preset_files`),
every key of the algorithm's config, the named keys with their source as a comment, and is
used by name (`jaxrl.presets`): ``jaxrl train ppo --env brax:hopper --config
ppo/baselines-mujoco``, or ``preset: ppo/baselines-mujoco`` in a benchmark suite entry.

``base`` says what the keys a preset does not name are: ``"class"``, the config class's own
defaults (a reference's configuration, apart from jaxrl's tuning: a reference preset names
every key that matters to it), or ``"family"``, jaxrl's defaults for the preset's ``env``
(`jaxrl.algos.families`: a tuned preset that changes a few of them). ``absent`` lists the
reference's settings jaxrl has no key for: what the preset cannot reproduce.

Sources were read from the references' code at these paths (openai/baselines at ea25b9e,
openai/spinningup at 038665d).

Length: one table (every named preset, a section per reference: baselines, Spinning Up, the
tuned classic-control presets, CleanRL, vel); the sections are data, each key one line with its
source, and splitting them would scatter the single registry `PRESETS`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

#: a large gradient-norm bound for references that clip no gradient: it never binds
NO_CLIP = 1.0e6

Keys = dict[str, tuple[Any, str]]  # config key -> (value, where the value comes from)


def _keys(source: str, **values: Any) -> Keys:
    return {key: (value, source) for key, value in values.items()}


@dataclasses.dataclass(frozen=True)
class Preset:
    algo: str
    env: str  # the env the preset is for (its family gives base="family" its defaults)
    title: str  # whose configuration, for what
    keys: Keys
    absent: tuple[str, ...] = ()
    base: str = "class"  # keys not named: "class" (config class defaults) | "family"

    def values(self) -> dict[str, Any]:
        return {key: value for key, (value, _) in self.keys.items()}


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
    {**_keys(_RUN, num_envs=1, normalize_obs=True),
     **_keys(_RUN + " (ret=True: rewards scaled by the running std of the discounted return)",
             normalize_reward=True),
     **_keys(_PPO2, num_steps=2048, update_epochs=10, num_minibatches=32, gamma=0.99,
             gae_lambda=0.95, ent_coef=0.0, learning_rate=3e-4, clip_eps=0.2),
     **_keys(_PPO2 + " (lr = 3e-4 * remaining fraction; cliprange constant)", anneal_lr=True,
             anneal_clip=False),
     **_keys(_PPO2 + " (value_network='copy': a separate value MLP)", shared_network=False),
     **_keys(_MLP, hidden=(64, 64), activation="tanh"),
     **_keys("baselines common/distributions.py: logstd initialized to 0", init_log_std=0.0),
     **_keys(_PPO2_LEARN, vf_coef=0.5, max_grad_norm=0.5),
     **_keys(_PPO2_MODEL + ": Adam epsilon 1e-5", adam_eps=1e-5),
     **_keys(_PPO2_MODEL + ": the value prediction clipped by cliprange", clip_value_loss=True),
     **_keys(_PPO2_MODEL + ": advantages standardized per minibatch", normalize_advantages=True),
     **_keys(_DONE, bootstrap_truncation=False)},
    absent=("VecNormalize clips the scaled reward to +-10 (jaxrl scales it without a clip)",))

TRPO_BASELINES_MUJOCO = Preset(
    "trpo", "brax:hopper",
    "OpenAI baselines' TRPO (trpo_mpi) MuJoCo configuration: the TRPO-OAI row of reading 002's "
    "MuJoCo table (1M steps)",
    {**_keys(_TRPO + " (one env per MPI worker)", num_envs=1),
     **_keys(_TRPO + " (timesteps_per_batch)", num_steps=1024),
     **_keys(_TRPO + ": mlp(num_hidden=32, num_layers=2), MlpPolicy(hid_size=32, "
             "num_hid_layers=2), tanh", hidden=(32, 32), activation="tanh"),
     **_keys(_TRPO, max_kl=0.01, cg_iters=10, cg_damping=0.1, gamma=0.99, gae_lambda=0.98,
             vf_learning_rate=1e-3),
     **_keys(_TRPO + " (vf_iters: passes of value regression)", value_epochs=5),
     **_keys(_TRPO_LEARN + ": value minibatches of 64 (1024 / 64 = 16)", value_minibatches=16),
     **_keys(_TRPO + " (normalize_observations; ppo1 MlpPolicy's running ob_rms)",
             normalize_obs=True),
     **_keys(_TRPO_LEARN + ": no reward scaling", normalize_reward=False),
     **_keys(_TRPO_LEARN + ": Fisher-vector products on every 5th sample (arr[::5])",
             fisher_subsample=5),
     **_keys(_TRPO_LEARN + ": 10 line-search steps, halving", backtrack_iters=10,
             backtrack_coef=0.5),
     **_keys(_TRPO_LEARN + ": entcoeff default 0", ent_coef=0.0),
     **_keys(_TRPO_LEARN + ": advantages standardized over the batch",
             normalize_advantages=True),
     **_keys(_TRPO_LEARN + ": constant vf_stepsize", anneal_lr=False),
     **_keys(_TRPO_LEARN + ": no gradient clipping", max_grad_norm=NO_CLIP),
     **_keys("baselines common/mpi_adam.py: MpiAdam epsilon 1e-8", adam_eps=1e-8),
     **_keys("baselines common/distributions.py: logstd initialized to 0", init_log_std=0.0),
     **_keys(_DONE, bootstrap_truncation=False)},
    absent=("the line search accepts a step with KL up to 1.5 max_kl; jaxrl's keeps KL <= max_kl",
            "ppo1's MlpPolicy clips normalized observations to +-5; jaxrl clips them to +-10",
            "baselines' later run.py wraps every MuJoCo run in VecNormalize (rewards scaled too); "
            "the benchmark's trpo_mpi/run_mujoco.py (removed in the 2018 refactor) did not, and "
            "this preset follows it"))

# -- Spinning Up, its 3M-step MuJoCo benchmark ----------------------------------------------
_BENCH = "Spinning Up docs/spinningup/bench.rst (benchmark settings)"
_SU_PG = "spinup/algos/pytorch/{algo}/{algo}.py {algo}() default"
_SU_CORE = "spinup/algos/pytorch/ppo/core.py: MLPGaussianActor log_std = -0.5"
_SU_PLAIN = ("bench.rst: no observation normalization, no normalized value targets "
             "(the 'standard tricks' the page says these implementations lack)")
_SU_ADV = "spinup buffer get(): advantages standardized over the epoch's batch"
_SU_ADAM = "torch.optim.Adam defaults (eps 1e-8, no gradient clipping)"
_SU_BOOT = ("spinup: a trajectory cut by max_ep_len (1000, brax's episode length too) or by the "
            "epoch's end is bootstrapped from V")
_SU_ON_POLICY_ABSENT = (
    "max_ep_len 1000: Spinning Up cuts episodes itself; brax's episode_length is 1000 as well",)


def _spinup_on_policy(algo: str, tf1: bool = False) -> Keys:
    source = (f"spinup/algos/tf1/{algo}/{algo}.py {algo}() default" if tf1
              else _SU_PG.format(algo=algo))
    return {**_keys(_BENCH + ": 4000 steps per batch update (steps_per_epoch), one env",
                    num_envs=1, num_steps=4000),
            **_keys(_BENCH + ": (64, 32) tanh for policy and value", hidden=(64, 32),
                    activation="tanh", shared_network=False),
            **_keys(source, gamma=0.99, gae_lambda=0.97),
            **_keys(_SU_CORE, init_log_std=-0.5),
            **_keys(_SU_PLAIN, normalize_obs=False, normalize_reward=False),
            **_keys(_SU_ADV, normalize_advantages=True),
            **_keys(_SU_ADAM, adam_eps=1e-8, max_grad_norm=NO_CLIP, anneal_lr=False),
            **_keys(_SU_BOOT, bootstrap_truncation=True)}


VPG_SPINNINGUP_MUJOCO = Preset(
    "vpg", "brax:hopper", "Spinning Up's VPG as its 3M-step MuJoCo benchmark ran it",
    {**_spinup_on_policy("vpg"),
     **_keys(_SU_PG.format(algo="vpg") + " (pi_lr, vf_lr)", learning_rate=3e-4,
             vf_learning_rate=1e-3),
     **_keys(_SU_PG.format(algo="vpg") + " (train_v_iters: 80 full-batch value steps; one "
             "policy step)", value_epochs=80, value_minibatches=1, policy_epochs=1),
     **_keys(_SU_PG.format(algo="vpg") + ": no entropy bonus", ent_coef=0.0)},
    absent=_SU_ON_POLICY_ABSENT)

PPO_SPINNINGUP_MUJOCO = Preset(
    "ppo", "brax:hopper", "Spinning Up's PPO as its 3M-step MuJoCo benchmark ran it",
    {**_spinup_on_policy("ppo"),
     **_keys(_SU_PG.format(algo="ppo") + " (train_pi_iters: 80 full-batch steps)",
             update_epochs=80, num_minibatches=1),
     **_keys(_SU_PG.format(algo="ppo") + " (pi_lr; clip_ratio)", learning_rate=3e-4,
             clip_eps=0.2, anneal_clip=False),
     **_keys(_SU_PG.format(algo="ppo") + ": plain MSE value loss, no entropy bonus",
             clip_value_loss=False, ent_coef=0.0),
     **_keys("spinup ppo.py: the value loss is the MSE (jaxrl's is 0.5 MSE x vf_coef)",
             vf_coef=2.0)},
    absent=(
        *_SU_ON_POLICY_ABSENT,
        "vf_lr 1e-3 and train_v_iters 80 on the value's own Adam: jaxrl's PPO steps policy and "
        "value together with one Adam at learning_rate (3e-4), 80 times",
        "target_kl 0.01: Spinning Up stops the policy's steps once the approximate KL passes "
        "1.5 x 0.01; jaxrl's PPO has no early stopping, so all 80 full-batch steps run"))

TRPO_SPINNINGUP_MUJOCO = Preset(
    "trpo", "brax:hopper",
    "Spinning Up's TRPO (TensorFlow 1: it has no PyTorch TRPO) as its 3M-step MuJoCo benchmark "
    "ran it",
    {**_spinup_on_policy("trpo", tf1=True),
     **_keys("spinup/algos/tf1/trpo/trpo.py trpo() default (delta, vf_lr, damping_coeff, "
             "cg_iters, backtrack_iters, backtrack_coeff)", max_kl=0.01, vf_learning_rate=1e-3,
             cg_damping=0.1, cg_iters=10, backtrack_iters=10, backtrack_coef=0.8),
     **_keys("spinup/algos/tf1/trpo/trpo.py (train_v_iters: 80 full-batch value steps)",
             value_epochs=80, value_minibatches=1),
     **_keys("spinup/algos/tf1/trpo/trpo.py: the Hessian-vector product on the whole batch",
             fisher_subsample=1),
     **_keys("spinup/algos/tf1/trpo/trpo.py: no entropy bonus", ent_coef=0.0),
     **_keys("spinup/algos/tf1/trpo/core.py: log_std = -0.5", init_log_std=-0.5),
     **_keys("tf.train.AdamOptimizer defaults (eps 1e-8, no gradient clipping)", adam_eps=1e-8,
             max_grad_norm=NO_CLIP)},
    absent=_SU_ON_POLICY_ABSENT)

_SU_OFF = "spinup/algos/pytorch/{algo}/{algo}.py {algo}() default"
_SU_OFF_ABSENT = (
    "update_after 1000 with start_steps 10000: Spinning Up learns from step 1,000 while acting "
    "at random until 10,000; jaxrl's learning_starts is both, so learning starts at 10,000",
    "update_every 50 (50 gradient steps every 50 env steps): jaxrl interleaves the same ratio, "
    "one gradient step per env step",
    "num_test_episodes 10 every epoch: the suite's final evaluation is its own")


def _spinup_off_policy(algo: str) -> Keys:
    return {**_keys(_BENCH + ": (256, 256) relu", hidden=(256, 256), activation="relu"),
            **_keys(_BENCH + ": minibatches of 100", batch_size=100),
            **_keys(_SU_OFF.format(algo=algo) + " (replay_size 1e6; gamma; polyak 0.995)",
                    buffer_size=1_000_000, gamma=0.99, tau=0.005),
            **_keys(_SU_OFF.format(algo=algo) + " (start_steps: uniform random actions)",
                    learning_starts=10_000),
            **_keys(_SU_OFF.format(algo=algo) + ": one env, one gradient step per env step",
                    num_envs=1, gradient_steps=1, log_interval=50),
            **_keys(_SU_OFF.format(algo=algo) + ": one-step targets, uniform replay",
                    n_step=1, prioritized=False),
            **_keys(_SU_ADAM, adam_eps=1e-8, max_grad_norm=NO_CLIP),
            **_keys(_SU_OFF.format(algo=algo) + ": a time-limit (max_ep_len) done is not "
                    "terminal", bootstrap_truncation=True)}


def _spinup_ddpg_like(algo: str, twin: bool) -> Keys:
    src = _SU_OFF.format(algo=algo)
    keys = {**_spinup_off_policy(algo),
            **_keys(src + " (pi_lr, q_lr, act_noise)", actor_lr=1e-3, critic_lr=1e-3,
                    exploration_noise=0.1),
            **_keys(src + ": Gaussian action noise drawn afresh each step",
                    action_noise="white")}
    if twin:
        keys.update(_keys(src + " (clipped double Q, policy_delay, target_noise, noise_clip)",
                          num_critics=2, policy_delay=2, target_policy_noise=True,
                          target_noise=0.2, target_noise_clip=0.5))
    else:
        keys.update(_keys(src + ": one critic, no delay or target smoothing", num_critics=1,
                          policy_delay=1, target_policy_noise=False))
    return keys


DDPG_SPINNINGUP_MUJOCO = Preset(
    "ddpg", "brax:hopper", "Spinning Up's DDPG as its 3M-step MuJoCo benchmark ran it",
    _spinup_ddpg_like("ddpg", twin=False), absent=_SU_OFF_ABSENT)

TD3_SPINNINGUP_MUJOCO = Preset(
    "td3", "brax:hopper", "Spinning Up's TD3 as its 3M-step MuJoCo benchmark ran it",
    _spinup_ddpg_like("td3", twin=True), absent=_SU_OFF_ABSENT)

SAC_SPINNINGUP_MUJOCO = Preset(
    "sac", "brax:hopper", "Spinning Up's SAC as its 3M-step MuJoCo benchmark ran it",
    {**_spinup_off_policy("sac"),
     **_keys(_SU_OFF.format(algo="sac") + " (lr for the actor and the critics)", actor_lr=1e-3,
             critic_lr=1e-3),
     **_keys(_SU_OFF.format(algo="sac") + ": a fixed temperature alpha = 0.2",
             autotune_alpha=False, init_alpha=0.2),
     **_keys(_SU_OFF.format(algo="sac") + ": independent samples of the policy",
             action_noise="white")},
    absent=(*_SU_OFF_ABSENT, "spinup/algos/pytorch/sac/core.py clamps the policy's log std to "
            "[-20, 2]; jaxrl's SquashedGaussianActor to [-5, 2]"))

# -- jaxrl's tuned presets for one task ---------------------------------------------------------
PPO_MOUNTAINCAR = Preset(
    "ppo", "MountainCarContinuous-v0",
    "jaxrl's PPO for MountainCarContinuous-v0: the continuous-control defaults with RL Baselines3 "
    "Zoo's discount (no gSDE: jaxrl has none)",
    _keys("RL Baselines3 Zoo hyperparams/ppo.yml, MountainCarContinuous-v0 (gamma 0.9999). "
          "Measured at the zoo's 20k steps (final deterministic evaluation): 19 of 20 seeds "
          "above 90 (one at -6.9); at the family's gamma of 0.9, 0 of 4 (the goal's +100 is too "
          "far off to pull the policy away from standing still)", gamma=0.9999),
    base="family")

SAC_MOUNTAINCAR_OU = Preset(
    "sac", "MountainCarContinuous-v0",
    "jaxrl's SAC for MountainCarContinuous-v0: the continuous-control defaults exploring with "
    "Ornstein-Uhlenbeck noise in place of the zoo's gSDE (jaxrl has none)",
    {**_keys("correlated exploration (pink/red-noise SAC; the zoo's SAC uses gSDE for it): the "
             "standard normal draw of the behaviour sample tanh(mean + std z) is an OU process, "
             "reset at episode ends (jaxrl.ops.noise)", action_noise="ou"),
     **_keys("jaxrl, measured: a correlation of exp(-2 x 0.01) = 0.98 per step (~50 steps, a "
             "swing of the car) found the goal within ~4k steps and ended at 94.3-94.8 on 8 of "
             "8 seeds (final deterministic evaluation, the zoo's 50k steps); baselines' theta "
             "0.15 (~670 steps: one push a whole episode) and white noise stayed at ~0",
             ou_theta=2.0, ou_dt=0.01)},
    base="family")

# -- CleanRL, the classic-control DQN figure the classic suite holds DQN to ----------------------
_CLEANRL_DQN = "CleanRL dqn.py argument defaults"

DQN_CLEANRL_CLASSIC = Preset(
    "dqn", "CartPole-v1",
    "CleanRL's dqn.py (its CartPole-v1 benchmark, 500k steps): vanilla DQN, a hard target copy "
    "every 500 env steps, epsilon decayed over half the run",
    {**_keys(_CLEANRL_DQN + " (train-frequency 10 on 1 env): one update of batch 128 per 10 env "
             "steps, here 10 envs stepped once per update", num_envs=10, gradient_steps=1,
             batch_size=128),
     **_keys(_CLEANRL_DQN, buffer_size=10_000, learning_starts=10_000, learning_rate=2.5e-4,
             gamma=0.99, eps_start=1.0, eps_end=0.05, eps_decay_fraction=0.5),
     **_keys(_CLEANRL_DQN + " (tau 1, target-network-frequency 500 env steps = 50 updates)",
             tau=1.0, target_update_period=50),
     **_keys("CleanRL dqn.py QNetwork: Linear 120, ReLU, Linear 84, ReLU", hidden=(120, 84),
             activation="relu", dueling=False),
     **_keys("CleanRL dqn.py: the target's max over the target net (no double Q), "
             "F.mse_loss, torch Adam (epsilon 1e-8), no gradient clipping", double_q=False,
             loss="mse", optimizer="adam", adam_eps=1e-8, max_grad_norm=NO_CLIP,
             anneal_lr=False),
     **_keys(_CLEANRL_DQN + ": one-step targets from a uniform buffer", n_step=1,
             prioritized=False),
     **_keys("CleanRL dqn.py: SB3's ReplayBuffer(handle_timeout_termination=True) keeps a "
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
    {**_keys(_ZOO_DQN + " (train_freq 16, gradient_steps 4 on 1 env): 4 updates per 16 env "
             "steps, here 16 envs stepped once per round of 4 updates", num_envs=16,
             gradient_steps=4),
     **_keys(_ZOO_DQN, batch_size=512, buffer_size=100_000, learning_starts=0,
             learning_rate=2.5e-4, gamma=0.99, eps_start=1.0, eps_end=0.11,
             eps_decay_fraction=0.06),
     **_keys(_ZOO_DQN + " (tau 1, target_update_interval 5,000 env steps = 1,250 updates at "
             "4 per 16 steps)", tau=1.0, target_update_period=1250),
     **_keys(_SB3_DQN, double_q=False, dueling=False, loss="huber", optimizer="adam",
             adam_eps=1e-8, max_grad_norm=10.0, anneal_lr=False, hidden=(64, 64),
             activation="relu", n_step=1, prioritized=False),
     **_keys("SB3's ReplayBuffer(handle_timeout_termination=True) keeps a time-limit end "
             "bootstrapped", bootstrap_truncation=True)},
    absent=("1 env stepped 16 times between rounds of updates: jaxrl steps 16 envs once per "
            "round (the same 16 new transitions per 4 updates, from 16 episodes at a time)",))

PRESETS: dict[str, Preset] = {
    "ppo/baselines-mujoco": PPO_BASELINES_MUJOCO,
    "trpo/baselines-mujoco": TRPO_BASELINES_MUJOCO,
    "vpg/spinningup-mujoco": VPG_SPINNINGUP_MUJOCO,
    "ppo/spinningup-mujoco": PPO_SPINNINGUP_MUJOCO,
    "trpo/spinningup-mujoco": TRPO_SPINNINGUP_MUJOCO,
    "ddpg/spinningup-mujoco": DDPG_SPINNINGUP_MUJOCO,
    "td3/spinningup-mujoco": TD3_SPINNINGUP_MUJOCO,
    "sac/spinningup-mujoco": SAC_SPINNINGUP_MUJOCO,
    "ppo/mountaincar": PPO_MOUNTAINCAR,
    "sac/mountaincar-ou": SAC_MOUNTAINCAR_OU,
    "dqn/cleanrl-classic": DQN_CLEANRL_CLASSIC,
    "dqn/zoo-acrobot": DQN_ZOO_ACROBOT,
}


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
    **_keys(_VEL_FRAMES, normalize_obs=False),
    **_keys(_VEL + "atari_a2c.yaml (parallel_envs 16, number_of_steps 5)", num_envs=16,
            num_steps=5),
    **_keys(_VEL + "atari_a2c.yaml: RMSprop lr 7e-4, alpha 0.99, epsilon 1e-3, max_grad_norm 0.5",
            optimizer="rmsprop", learning_rate=7e-4, rmsprop_decay=0.99, rmsprop_eps=1e-3,
            max_grad_norm=0.5),
    **_keys(_VEL_TORCH_RMSPROP, rmsprop_style="pytorch"),
    **_keys(_VEL + "atari_a2c.yaml: no scheduler, the lr is constant (baselines anneals it)",
            anneal_lr=False),
    **_keys(_VEL + "atari_a2c.yaml (entropy_coefficient, value_coefficient, discount_factor)",
            ent_coef=0.01, vf_coef=0.5, gamma=0.99),
    **_keys(_VEL + "atari_a2c.yaml: one Nature CNN, its output repeated for the two heads",
            torso="nature_cnn", shared_network=True)})

PPO_VEL_ATARI = _vel("ppo", "PPO (ppo/breakout_ppo.yaml; baselines' ppo2 Atari settings)", {
    **_keys(_VEL_FRAMES, normalize_obs=False),
    **_keys(_VEL + "ppo/breakout_ppo.yaml (parallel_envs 8, number_of_steps 128, "
            "experience_replay 4 epochs, batch_size 256: 4 minibatches)", num_envs=8,
            num_steps=128, update_epochs=4, num_minibatches=4),
    **_keys(_VEL + "ppo/breakout_ppo.yaml: cliprange linear from 0.1 to 0", clip_eps=0.1,
            anneal_clip=True),
    **_keys(_VEL + "ppo/breakout_ppo.yaml: Adam 2.5e-4 (epsilon 1e-5) under "
            "linear_batch_scaler", learning_rate=2.5e-4, adam_eps=1e-5, anneal_lr=True),
    **_keys(_VEL + "ppo/breakout_ppo.yaml (entropy and value coefficients, max_grad_norm, "
            "discount_factor, gae_lambda)", ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
            gamma=0.99, gae_lambda=0.95),
    **_keys(_VEL + "ppo/breakout_ppo.yaml: one Nature CNN backbone for both heads",
            torso="nature_cnn", shared_network=True)})

TRPO_VEL_ATARI = _vel("trpo", "TRPO (trpo/breakout_trpo.yaml, in place of baselines' poor one)", {
    **_keys(_VEL_FRAMES, normalize_obs=False),
    **_keys(_VEL + "trpo/breakout_trpo.yaml (parallel_envs 16, number_of_steps 32)",
            num_envs=16, num_steps=32),
    **_keys(_VEL + "trpo/breakout_trpo.yaml: a policy and a value net of nature_cnn_small "
            "(8 and 16 filters, 128 units, ReLU)", torso="nature_cnn_small", activation="relu"),
    **_keys(_VEL + "trpo/breakout_trpo.yaml (max_kl, cg_damping, cg_iters, line_search_iters, "
            "entropy_coef, discount_factor, gae_lambda)", max_kl=0.001, cg_damping=0.001,
            cg_iters=10, backtrack_iters=10, ent_coef=0.1, gamma=0.99, gae_lambda=1.0),
    **_keys("vel's TRPO: a line search halving the step; the Fisher on the whole batch",
            backtrack_coef=0.5, fisher_subsample=1),
    **_keys(_VEL + "trpo/breakout_trpo.yaml: vf_iters 3 passes, Adam 1e-4 (epsilon 1e-3)",
            value_epochs=3, value_minibatches=1, vf_learning_rate=1e-4, adam_eps=1e-3)},
    absent=("vel accepts a line-search step up to 1.5 max_kl of KL and an improvement of 0.1 of "
            "the expected (improvement_acceptance_ratio); jaxrl's keeps KL <= max_kl",))

DQN_VEL_ATARI = _vel("dqn", "Nature-like double DQN (dqn/breakout_ddqn.yaml)", {
    **_keys(_VEL + "dqn/breakout_ddqn.yaml: a batch of 32 every 4 env steps (here 4 envs x 1 "
            "update per round)", num_envs=4, gradient_steps=1, batch_size=32),
    **_keys(_VEL + "dqn/breakout_ddqn.yaml (buffer_capacity 250k, buffer_initial_size 30k, "
            "frames kept once: frame_stack_compensation)", buffer_size=250_000,
            learning_starts=30_000, frame_replay=True),
    **_keys(_VEL + "dqn/breakout_ddqn.yaml (double_dqn, a hard target copy every 10k "
            "updates, max_grad_norm, discount_factor)", double_q=True,
            target_update_period=10_000, tau=1.0, max_grad_norm=0.5, gamma=0.99),
    **_keys(_VEL + "dqn/breakout_ddqn.yaml: RMSprop lr 2.5e-4, alpha 0.95, momentum 0.95, "
            "epsilon 0.1", optimizer="rmsprop", learning_rate=2.5e-4, rmsprop_decay=0.95,
            rmsprop_momentum=0.95, rmsprop_eps=0.1),
    **_keys(_VEL_TORCH_RMSPROP, rmsprop_style="pytorch"),
    **_keys(_VEL + "dqn/breakout_ddqn.yaml: epsilon 1 -> 0.1 over the first 10% of the run",
            eps_start=1.0, eps_end=0.1, eps_decay_fraction=0.1),
    **_keys(_VEL + "dqn/breakout_ddqn.yaml: the Nature CNN", torso="nature_cnn"),
    **_keys("jaxrl: metrics averaged over 250 rounds (no bearing on learning)",
            log_interval=250)})

ACER_VEL_ATARI = _vel("acer", "ACER (acer/breakout_acer_trust_region.yaml)", {
    **_keys(_VEL + "acer/*_acer_trust_region.yaml (parallel_envs 12, number_of_steps 20)",
            num_envs=12, num_steps=20),
    **_keys(_VEL + "acer/*_acer_trust_region.yaml: 50k steps per env in replay (30k segments), "
            "replay from 10k per env (6k segments); frames kept once per segment (28 uint8 "
            "frames per 20 steps: 5.9 GB per seed, where whole stacks for obs and next obs "
            "would be 34 GB)", buffer_segments=30_000,
            replay_start=6_000, frame_replay=True),
    **_keys("vel's stochastic_experience_replay (on by default; baselines draws them so too): "
            "Poisson(4) replays per rollout of 12 segments", replay_schedule="poisson",
            replay_ratio=4, replay_batch=12),
    **_keys(_VEL + "acer/*_acer_trust_region.yaml (rho_cap, q_coefficient, "
            "entropy_coefficient, trust region, max_grad_norm, discount_factor)", c_bar=10.0,
            q_coef=0.5, ent_coef=0.01, trust_region=True, delta=1.0, max_grad_norm=10.0,
            gamma=0.99),
    **_keys(_VEL + "acer/*_acer_trust_region.yaml: RMSprop lr 7e-4, alpha 0.99, epsilon 1e-3",
            optimizer="rmsprop", learning_rate=7e-4, rmsprop_decay=0.99, rmsprop_eps=1e-3),
    **_keys(_VEL_TORCH_RMSPROP, rmsprop_style="pytorch"),
    **_keys(_VEL + "acer: one Nature CNN for the policy and Q heads", torso="nature_cnn",
            shared_network=True)})

#: vel's Atari configurations by algorithm: jaxrl's atari family defaults for these five
VEL_ATARI: dict[str, Preset] = {"a2c": A2C_VEL_ATARI, "ppo": PPO_VEL_ATARI,
                                "trpo": TRPO_VEL_ATARI, "dqn": DQN_VEL_ATARI,
                                "acer": ACER_VEL_ATARI}
PRESETS.update({f"{algo}/vel-atari": preset for algo, preset in VEL_ATARI.items()})
