"""The catalogue of metric names: every metric a train step, the driver or an evaluation writes,
what it means, and whether NaN is an allowed value of it (NaN by design where there is nothing
to measure, never a fake 0). JAX-free: the run store and the CLI read it too.

A name is found (`lookup`) as itself, as one of `describe`'s statistics of a described quantity
(``q_mean``, ``advantage_std``; `DESCRIBED`), or as a part's prefix on a gradient or loss
metric (``actor_grad_norm``, ``value_loss``; `PARTS`). ACER's replayed updates repeat its
on-policy metrics under ``replay_``.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Metric:
    name: str
    meaning: str
    nan_allowed: bool = False  # NaN by design when there is nothing to measure


def _table(*rows: tuple) -> dict[str, Metric]:
    return {row[0]: Metric(*row) for row in rows}


NAN_OK = True

#: the metrics written under their own name
METRICS: dict[str, Metric] = _table(
    # the run: counters the driver and the train steps keep
    ("env_steps", "env steps per seed so far (at the end of the update)"),
    ("env_steps_per_second", "the chunk's env steps (all seeds) per second of its wall time"),
    ("env_nonfinite_steps", "env steps of the update whose physics state went non-finite"),
    ("env_reused_starts", "episodes of the update that began from a prepared start an earlier "
                          "episode had begun from (envs.starts)"),
    # episodes finished during the update (NaN: none finished)
    ("episode_count", "episodes finished during the update"),
    # evaluation (NaN: no evaluation yet, or no episode finished within its step limit)
    ("eval_return", "mean return of the evaluation episodes (deterministic policy)", NAN_OK),
    ("eval_return_std", "std of the evaluation episodes' returns", NAN_OK),
    # losses and optimizer
    ("loss", "the learner's loss (the Q-learners' TD or distributional loss)"),
    ("policy_loss", "the policy's surrogate or policy-gradient loss"),
    ("entropy", "mean entropy of the policy at the batch's observations (nats)"),
    ("entropy_relative", "entropy divided by its maximum, log(number of actions)"),
    ("log_std_mean", "mean log-std of a Gaussian policy"),
    ("learning_rate", "the learning rate used by the update (after annealing)"),
    ("grad_norm", "global norm of the gradient (before clipping)"),
    ("grad_abs_max", "largest absolute gradient entry (verbosity full)"),
    ("grad_mean_square", "mean squared gradient entry (verbosity full)"),
    ("update_norm", "global norm of the applied parameter update (verbosity debug)"),
    # policy updates
    ("approx_kl", "E[(r - 1) - log r], an estimate of KL(old || new) after the update"),
    ("clip_eps", "PPO's clip range used by the update (after annealing)"),
    ("clip_fraction", "share of samples whose probability ratio was clipped"),
    ("residual_variance", "Var[target - V] / Var[target] (1 - explained variance); NaN when the "
     "targets are constant", NAN_OK),
    ("popart_mean", "PopArt's running mean of the value targets"),
    ("popart_sigma", "PopArt's running scale of the value targets"),
    # TRPO's natural-gradient step
    ("cg_residual", "residual norm of conjugate gradient's solution of F x = g"),
    ("expected_improvement", "the surrogate's improvement the full step predicts, g . step"),
    ("surrogate_improvement", "the surrogate's measured improvement of the accepted step "
     "(0 when none)"),
    ("kl_after_step", "KL(old || new) of the accepted step (0 when none)"),
    ("step_accepted", "1 when the line search accepted a step"),
    ("line_search_steps", "backtracking steps the line search took"),
    ("policy_step_norm", "norm of the policy's parameter step"),
    # replay learners
    ("epsilon", "epsilon of epsilon-greedy exploration (after its decay)"),
    ("td_error_abs_mean", "mean |TD error| over the sampled batch"),
    ("td_error_abs_max", "largest |TD error| over the sampled batch"),
    ("cross_entropy", "C51's cross-entropy of the projected target and the online distribution"),
    ("buffer_fill", "share of the replay buffer filled"),
    ("gradient_updates", "learning steps taken so far"),
    ("learning_fraction", "share of the train step's rounds that learned (after "
     "learning_starts)"),
    ("sample_staleness", "mean age of the sampled transitions, in env-step rounds"),
    ("importance_weight_mean", "mean importance weight of prioritized replay's batch"),
    ("frame_mismatches", "stacks the frame store could not rebuild exactly (must stay 0)"),
    # SAC's temperature
    ("alpha", "SAC's entropy temperature"),
    ("alpha_loss", "SAC's temperature loss"),
    # ACER (and under replay_ for its replayed updates: NaN before replay starts)
    ("q_loss", "ACER's Q-head regression loss against Q_ret"),
    ("rho_mean", "mean importance ratio pi / mu of the taken actions"),
    ("rho_truncated_fraction", "share of importance ratios above c_bar (truncated)"),
    ("bias_correction_share", "mean size of ACER's bias-correction term"),
    ("trust_region_active_fraction", "share of samples whose step the trust region shrank"),
    ("kl_from_average", "KL(average policy || policy) at the batch's observations"),
    ("q_taken_mean", "mean Q of the taken actions"),
    ("v_mean", "mean V = sum_a pi Q"),
    ("q_ret_mean", "mean Retrace target Q_ret"),
    ("replay_fraction", "1 once ACER's replay has started"),
    ("replay_updates", "replayed updates in the train step"),
    # imitation
    ("bc_nll", "BC's negative log-likelihood of the expert's actions"),
    ("expert_accuracy", "share of expert steps where BC's mode is the expert's action"),
    ("expert_action_error", "mean |BC's mode - the expert's action| (Box actions)"),
    ("disc_loss", "GAIL's discriminator binary cross-entropy"),
    ("disc_grad_penalty", "GAIL's discriminator gradient penalty"),
    ("disc_accuracy_expert", "share of expert pairs the discriminator calls expert"),
    ("disc_accuracy_policy", "share of policy pairs the discriminator calls policy"),
    ("learned_reward_mean", "mean reward the discriminator gives the rollout"),
)

#: quantities reported by `jaxrl.parts.diagnostics.describe` as ``{name}_{mean,std,min,max}``
DESCRIBED: dict[str, tuple[str, bool]] = {
    "episode_return": ("return of the episodes finished during the update", NAN_OK),
    "episode_length": ("length of the episodes finished during the update", NAN_OK),
    "q": ("Q of the taken actions over the sampled batch", False),
    "target": ("the learner's TD targets over the sampled batch", False),
    "value": ("V_old over the rollout (verbosity debug)", False),
    "value_target": ("the lambda-return targets over the rollout (verbosity debug)", False),
    "advantage": ("GAE advantages over the rollout (verbosity debug)", False),
    "reward": ("the env's rewards over the rollout (verbosity debug)", False),
    "reward_scaled": ("the rewards the learner saw, after scaling (verbosity debug)", False),
}
STATISTICS = ("mean", "std", "min", "max")

#: parts of an agent whose losses and gradients are reported under their prefix
PARTS: dict[str, str] = {
    "actor_": "the actor's",
    "critic_": "the critics'",
    "value_": "the value regression's",
    "policy_": "the policy step's",
    "replay_": "ACER's replayed updates (NaN before replay starts)",
}
_PART_METRICS = {"loss": "loss", "grad_norm": "gradient global norm (before clipping)",
                 "grad_abs_max": "largest absolute gradient entry (verbosity full)",
                 "grad_mean_square": "mean squared gradient entry (verbosity full)",
                 "update_norm": "applied update's global norm (verbosity debug)"}


def lookup(name: str) -> Metric | None:
    """The catalogue's entry for metric ``name``, or None for a name it does not know."""
    if name in METRICS:
        return METRICS[name]
    quantity, _, statistic = name.rpartition("_")
    if statistic in STATISTICS and quantity in DESCRIBED:
        meaning, nan_ok = DESCRIBED[quantity]
        return Metric(name, f"{statistic} of {meaning}", nan_ok)
    for prefix, whose in PARTS.items():
        base = name.removeprefix(prefix)
        if base == name:
            continue
        if prefix != "replay_" and base in _PART_METRICS:
            return Metric(name, f"{whose} {_PART_METRICS[base]}")
        if prefix == "replay_" and (found := lookup(base)) is not None:
            return Metric(name, f"{found.meaning}, in {whose}", True)
    return None


def nan_allowed(name: str) -> bool:
    """Whether NaN is a value ``name`` may take by design (an unknown name: no)."""
    found = lookup(name)
    return found is not None and found.nan_allowed
