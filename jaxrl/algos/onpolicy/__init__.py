"""Machinery shared by the on-policy algorithms (PPO, VPG, A2C, TRPO).

A new on-policy algorithm is its config (static fields on an `OnPolicyStatic` subclass, traced
ones on an `OnPolicyHparams` subclass), its loss and its update rule
``update(state, batch, key, static, network) -> Updated`` plus the optimizers it keeps
(``optimizers(hp, static, lr_scale) -> ParamGroups`` of ``GradientTransformation``). Traced
values are read from ``state.hparams`` only, static ones from the static view ``static``.
Everything else lives here once: the rollout, observation normalization, reward scaling,
truncation-aware advantages (`make_batch`), parameter groups, minibatch SGD, value regression,
diagnostics and state bookkeeping (`make_train_step`, `make_init`).

Parameter groups (`ParamGroups`): ``all`` (every parameter), ``policy`` and ``value`` (the two
separate MLPs of an unshared `ActorCritic`). An algorithm's optimizer state holds one optimizer
state per group it trains.
"""

from jaxrl.algos.obs_normalization import OBS_CLIP, normalize_obs
from jaxrl.algos.onpolicy.batch import (
    Batch,
    adapt_value_head,
    check_batch,
    first_steps,
    forward,
    make_batch,
    standardize,
    value_head_layer,
    value_heads,
    value_of_head,
)
from jaxrl.algos.onpolicy.collect import (
    loss_flags,
    policy_sample,
    recurrent_step,
    rollout,
    scale_rewards,
    update_reward_scaler,
)
from jaxrl.algos.onpolicy.config import (
    OnPolicyHparams,
    OnPolicyStatic,
    RolloutStatic,
    SeparateValueHparams,
    SeparateValueStatic,
)
from jaxrl.algos.onpolicy.footprint import memory_model, working_set
from jaxrl.algos.onpolicy.kit import algorithm
from jaxrl.algos.onpolicy.policy import make_policy
from jaxrl.algos.onpolicy.sgd import (
    fit_value,
    minibatch_sgd,
    policy_shift,
    shuffle_envs_into_minibatches,
    shuffle_into_minibatches,
)
from jaxrl.algos.onpolicy.state import (
    _GROUP_KEYS,
    OnPolicyState,
    ParamGroups,
    Progress,
    RewardScaler,
    Updated,
    action_mask_size,
    initial_memory,
    lr_scale,
    make_init,
    make_network,
    param_group,
    policy_log_std,
    progress_scale,
    with_param_group,
)
from jaxrl.algos.onpolicy.train_step import advance, make_train_step, rollout_metrics

__all__ = [
    "OBS_CLIP",
    "_GROUP_KEYS",
    "Batch",
    "OnPolicyHparams",
    "OnPolicyState",
    "OnPolicyStatic",
    "ParamGroups",
    "Progress",
    "RewardScaler",
    "RolloutStatic",
    "SeparateValueHparams",
    "SeparateValueStatic",
    "Updated",
    "action_mask_size",
    "adapt_value_head",
    "advance",
    "algorithm",
    "check_batch",
    "first_steps",
    "fit_value",
    "forward",
    "initial_memory",
    "loss_flags",
    "lr_scale",
    "make_batch",
    "make_init",
    "make_network",
    "make_policy",
    "make_train_step",
    "memory_model",
    "minibatch_sgd",
    "normalize_obs",
    "param_group",
    "policy_log_std",
    "policy_sample",
    "policy_shift",
    "progress_scale",
    "recurrent_step",
    "rollout",
    "rollout_metrics",
    "scale_rewards",
    "shuffle_envs_into_minibatches",
    "shuffle_into_minibatches",
    "standardize",
    "update_reward_scaler",
    "value_head_layer",
    "value_heads",
    "value_of_head",
    "with_param_group",
    "working_set",
]
