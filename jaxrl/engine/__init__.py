"""The training engine: how one compiled program trains many members.

    state = jit(vmap(init))(member_keys, member_hparams)       # one program, all members
    for chunk in chunks:                                       # host loop: progress, eval, NaN guard
        state, metrics = jit(vmap(scan(train_step, K)))(state) # K updates, all members
        metrics -> host (np arrays [members, K]), checked, streamed to the run store
        every N chunks: checkpoint (orbax, async write)

A *member* is one (config, seed) pair: a plain run has one config, a sweep group several
configs that share their static fields. Compiled programs are cached by (algorithm, static
config fields, env, shapes): traced hyperparameters live in ``state.hparams`` (one row per
member), so changing only e.g. the learning rate reuses the compiled program and configs vmap
like seeds. The member axis is sharded over the local devices when there are several.

One concept per module:

- `members`:  the member axis: keys, padding, sharding over devices, vmap-or-not.
- `spec`:     `GroupSpec` (what to run, JSON-able), request validation and resolution, the
              memory plan.
- `programs`: the compile cache and the init / chunk / eval programs.
- `loop`:     `run_group`, the chunk loop (progress, evaluation, NaN guard, checkpoints).
- `resumption`: a group's progress, saved with each checkpoint and restored by a resume.
- `recorded`: a group run streamed into run-store folders, and its resumption.
- `checkpoint`: atomic, verified orbax checkpoints of the train state (what `resume` reads).

The public entry points (`train`, `make_train`, `resume`) are in `jaxrl.api`; what a run gives
back (results, policies, demonstrations, videos) in `jaxrl.trained`, which never imports the
engine.
"""
