"""Spinning Up's settings for its 3M-step MuJoCo benchmark (VPG, PPO, TRPO, DDPG, TD3, SAC)."""

from __future__ import annotations

from jaxrl.algos.references.preset import NO_CLIP, Keys, Preset, sourced

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
    return {**sourced(_BENCH + ": 4000 steps per batch update (steps_per_epoch), one env",
                    num_envs=1, num_steps=4000),
            **sourced(_BENCH + ": (64, 32) tanh for policy and value", hidden=(64, 32),
                    activation="tanh", shared_network=False),
            **sourced(source, gamma=0.99, gae_lambda=0.97),
            **sourced(_SU_CORE, init_log_std=-0.5),
            **sourced(_SU_PLAIN, normalize_obs=False, normalize_reward=False),
            **sourced(_SU_ADV, normalize_advantages=True),
            **sourced(_SU_ADAM, adam_eps=1e-8, max_grad_norm=NO_CLIP, anneal_lr=False),
            **sourced(_SU_BOOT, bootstrap_truncation=True)}


VPG_SPINNINGUP_MUJOCO = Preset(
    "vpg", "brax:hopper", "Spinning Up's VPG as its 3M-step MuJoCo benchmark ran it",
    {**_spinup_on_policy("vpg"),
     **sourced(_SU_PG.format(algo="vpg") + " (pi_lr, vf_lr)", learning_rate=3e-4,
             vf_learning_rate=1e-3),
     **sourced(_SU_PG.format(algo="vpg") + " (train_v_iters: 80 full-batch value steps; one "
             "policy step)", value_epochs=80, value_minibatches=1, policy_epochs=1),
     **sourced(_SU_PG.format(algo="vpg") + ": no entropy bonus", ent_coef=0.0)},
    absent=_SU_ON_POLICY_ABSENT)

PPO_SPINNINGUP_MUJOCO = Preset(
    "ppo", "brax:hopper", "Spinning Up's PPO as its 3M-step MuJoCo benchmark ran it",
    {**_spinup_on_policy("ppo"),
     **sourced(_SU_PG.format(algo="ppo") + " (train_pi_iters: 80 full-batch steps)",
             update_epochs=80, num_minibatches=1),
     **sourced(_SU_PG.format(algo="ppo") + " (pi_lr; clip_ratio)", learning_rate=3e-4,
             clip_eps=0.2, anneal_clip=False),
     **sourced(_SU_PG.format(algo="ppo") + ": plain MSE value loss, no entropy bonus",
             clip_value_loss=False, ent_coef=0.0),
     **sourced("spinup ppo.py: the value loss is the MSE (jaxrl's is 0.5 MSE x vf_coef)",
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
     **sourced("spinup/algos/tf1/trpo/trpo.py trpo() default (delta, vf_lr, damping_coeff, "
             "cg_iters, backtrack_iters, backtrack_coeff)", max_kl=0.01, vf_learning_rate=1e-3,
             cg_damping=0.1, cg_iters=10, backtrack_iters=10, backtrack_coef=0.8),
     **sourced("spinup/algos/tf1/trpo/trpo.py (train_v_iters: 80 full-batch value steps)",
             value_epochs=80, value_minibatches=1),
     **sourced("spinup/algos/tf1/trpo/trpo.py: the Hessian-vector product on the whole batch",
             fisher_subsample=1),
     **sourced("spinup/algos/tf1/trpo/trpo.py: no entropy bonus", ent_coef=0.0),
     **sourced("spinup/algos/tf1/trpo/core.py: log_std = -0.5", init_log_std=-0.5),
     **sourced("tf.train.AdamOptimizer defaults (eps 1e-8, no gradient clipping)", adam_eps=1e-8,
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
    return {**sourced(_BENCH + ": (256, 256) relu", hidden=(256, 256), activation="relu"),
            **sourced(_BENCH + ": minibatches of 100", batch_size=100),
            **sourced(_SU_OFF.format(algo=algo) + " (replay_size 1e6; gamma; polyak 0.995)",
                    buffer_size=1_000_000, gamma=0.99, tau=0.005),
            **sourced(_SU_OFF.format(algo=algo) + " (start_steps: uniform random actions)",
                    learning_starts=10_000),
            **sourced(_SU_OFF.format(algo=algo) + ": one env, one gradient step per env step",
                    num_envs=1, gradient_steps=1, log_interval=50),
            **sourced(_SU_OFF.format(algo=algo) + ": one-step targets, uniform replay",
                    n_step=1, prioritized=False),
            **sourced(_SU_ADAM, adam_eps=1e-8, max_grad_norm=NO_CLIP),
            **sourced(_SU_OFF.format(algo=algo) + ": a time-limit (max_ep_len) done is not "
                    "terminal", bootstrap_truncation=True)}


def _spinup_ddpg_like(algo: str, twin: bool) -> Keys:
    src = _SU_OFF.format(algo=algo)
    keys = {**_spinup_off_policy(algo),
            **sourced(src + " (pi_lr, q_lr, act_noise)", actor_lr=1e-3, critic_lr=1e-3,
                    exploration_noise=0.1),
            **sourced(src + ": Gaussian action noise drawn afresh each step",
                    action_noise="white")}
    if twin:
        keys.update(sourced(src + " (clipped double Q, policy_delay, target_noise, noise_clip)",
                          num_critics=2, policy_delay=2, target_policy_noise=True,
                          target_noise=0.2, target_noise_clip=0.5))
    else:
        keys.update(sourced(src + ": one critic, no delay or target smoothing", num_critics=1,
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
     **sourced(_SU_OFF.format(algo="sac") + " (lr for the actor and the critics)", actor_lr=1e-3,
             critic_lr=1e-3),
     **sourced(_SU_OFF.format(algo="sac") + ": a fixed temperature alpha = 0.2",
             autotune_alpha=False, init_alpha=0.2),
     **sourced(_SU_OFF.format(algo="sac") + ": independent samples of the policy",
             action_noise="white")},
    absent=(*_SU_OFF_ABSENT, "spinup/algos/pytorch/sac/core.py clamps the policy's log std to "
            "[-20, 2]; jaxrl's SquashedGaussianActor to [-5, 2]"))
