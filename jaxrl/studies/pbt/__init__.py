"""Population-based training (`jaxrl.pbt`), the whole population in one program.

* `jaxrl.studies.pbt.schedule`: exploit and explore on the host (which member copies which,
  the hyperparameters it goes on with);
* `jaxrl.studies.pbt.program`: the exploit as one compiled program on the member axis;
* `jaxrl.studies.pbt.store`: the request and the lineage in the run store;
* `jaxrl.studies.pbt.runner`: `pbt`, a population trained and resumed.
"""
