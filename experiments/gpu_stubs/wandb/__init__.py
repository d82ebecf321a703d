"""A stand-in for wandb on the lent GPU machines, put last on the GPU plan's path: the image has
no wandb and its wheels (20 MiB with their needs) would not fit what a call carries. Navix
imports it when imported, for its own ``Experiment`` class, which jaxrl never uses; whatever is
asked of it raises."""


def __getattr__(name: str):
    raise ImportError(f"wandb.{name}: wandb is not installed on this machine (a stand-in so that "
                      f"navix imports; experiments/gpu_stubs)")
