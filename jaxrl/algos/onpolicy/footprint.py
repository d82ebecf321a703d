"""The on-policy family's memory model, read by the memory plan before anything compiles."""

from __future__ import annotations

from jaxrl.algos.onpolicy.config import OnPolicyStatic, RolloutStatic
from jaxrl.algos.onpolicy.state import OnPolicyState
from jaxrl.parts import memory


def memory_model(config: OnPolicyStatic, state: OnPolicyState, obs_bytes: int,
                 action_bytes: int) -> memory.Footprint:
    """The on-policy family's memory model (`jaxrl.parts.memory`): no replay, and the working set of
    one train step (`working_set`). ``state`` may be abstract (``jax.eval_shape``); only its
    shapes are read."""
    return memory.Footprint(replay_bytes=0, working_bytes=working_set(
        config, state.params, state.opt_state, obs_bytes, action_bytes))


def working_set(config: RolloutStatic, params, opt_state, obs_bytes: int,
                action_bytes: int) -> int:
    """Bytes of one update on a rollout of ``B = num_envs * num_steps`` samples:

    * the rollout ``[T, N]``: obs, true next obs, action, reward, flags, log-prob, episode info;
    * the batch: normalized obs and next obs, values, next values, advantages, targets, scaled
      rewards, the flattened `Batch` and one shuffled copy of it;
    * the larger of two phases that do not overlap (XLA reuses the buffers): forward
      activations of every network on the whole batch (values, policy shift), and gradient
      activations on one minibatch (the whole batch without ``num_minibatches``: A2C, the
      full-batch policy steps of VPG / TRPO);
    * ``memory.LEARNER_TEMPORARIES`` copies of the learner (``params`` and ``opt_state``).
    """
    learner = memory.tree_bytes((params, opt_state))
    units = memory.activation_units(params, config)
    batch = config.num_envs * config.num_steps
    minibatch = -(-batch // max(1, config.num_minibatches))
    rollout = batch * (2 * obs_bytes + action_bytes + 4 + 2 + 4 + memory.INFO_BYTES)
    prepared = batch * (2 * obs_bytes + 7 * 4) + 2 * batch * (obs_bytes + action_bytes + 4 * 4)
    forward = batch * units * 4
    backward = minibatch * units * 4 * memory.ACTIVATION_STORE
    return rollout + prepared + max(forward, backward) + memory.LEARNER_TEMPORARIES * learner
