"""The off-policy family's memory model, read by the memory plan before anything compiles."""

from __future__ import annotations

from jaxrl.algos.offpolicy.config import OffPolicyStatic
from jaxrl.algos.offpolicy.state import OffPolicyState
from jaxrl.parts import memory


# -- memory model -------------------------------------------------------------------------------
def memory_model(config: OffPolicyStatic, state: OffPolicyState, obs_bytes: int,
                 action_bytes: int) -> memory.Footprint:
    """The off-policy family's memory model (`jaxrl.parts.memory`). Replay is ``state.buffer``
    (transitions, write steps, the sum tree when prioritized) and, with ``frame_replay``, the
    frame store its items point to. The working set of one train
    step (``log_interval`` rounds of acting, ``gradient_steps`` learning steps; only metrics
    are stacked): the sampled batch of ``batch_size`` items with indices, importance weights,
    targets and TD errors (and the ``[K, K]`` duplicate-index mask when prioritized); gradient
    activations of ``memory.OFF_POLICY_PASSES`` passes over all networks on it; one env round
    (``num_envs`` rows through the n-step window into the buffer); and
    ``memory.LEARNER_TEMPORARIES`` copies of the learner (params, targets, optimizer states:
    the learn / keep-if-learning selects copy all three). ``state`` may be abstract.
    """
    stored = memory.tree_bytes(state.buffer)
    replay = stored + memory.tree_bytes(state.frames)
    learner = memory.tree_bytes((state.params, state.target_params, state.opt_state))
    units = memory.activation_units(state.params, config)
    k, n = config.batch_size, config.num_envs
    item = -(-stored // max(1, config.buffer_size))
    sampled = k * (item + 4 * 4) + (k * k * 4 if config.prioritized else 0)
    if config.frame_replay:  # the batch's stacks, rebuilt (uint8) and as floats
        sampled += k * 2 * (obs_bytes + obs_bytes // 4)
    backward = memory.OFF_POLICY_PASSES * k * units * 4 * memory.ACTIVATION_STORE
    acting = n * (2 * obs_bytes + action_bytes + 4 * 4) * (2 + config.n_step) + n * units * 4
    work = sampled + backward + acting + memory.LEARNER_TEMPORARIES * learner
    return memory.Footprint(replay_bytes=replay, working_bytes=work)
