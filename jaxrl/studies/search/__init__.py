"""Hyperparameter search (`jaxrl.search`): Optuna's samplers asked for a batch of trials at a
time, each batch trained as one sweep (`jaxrl.studies.sweep`), the study kept in the run store.

* `jaxrl.studies.search.space`: the search space, parsed into Optuna distributions;
* `jaxrl.studies.search.store`: where a search lives in the run store;
* `jaxrl.studies.search.runner`: `search`, the batch loop and the trial table;
* `jaxrl.studies.search.pruning`: the successive-halving rule of a pruned search;
* `jaxrl.studies.search.pruned`: a pruned search's batches, slots refilled between chunks.
"""
