"""The studies wing: what runs many trainings and says what they found.

* `jaxrl.studies.sweep`: sweeps over config grids and random draws, their groups and their
  stored table;
* `jaxrl.studies.search`: hyperparameter search with Optuna's samplers, each batch of trials
  one sweep, the study in the run store;
* `jaxrl.studies.pbt`: population-based training, the population one program, exploited and
  explored between chunks;
* `jaxrl.studies.bench`: benchmark suites, their runs, verdicts against published references,
  the report and the figure;
* `jaxrl.studies.probe`: the probe ladder; `jaxrl.studies.throughput`: the throughput ladder;
* `jaxrl.studies.adaptive`: seeds added until a comparison decides; `jaxrl.studies.verdicts`:
  the verdict rule;
* `jaxrl.studies.ray`: their groups as Ray tasks (`jaxrl.studies.group_dir`: a task's
  resumable folder).

The wing builds on the engine, the run store (`jaxrl.runs`: the store, the catalog, the
queries) and the trained results; none of them imports it. This package and its report
modules (`bench.report`, `bench.judge`, `bench.markdown`, `sweep.table`, `sweep.manifest`) load
no JAX: the store's CLI reads them.
"""
