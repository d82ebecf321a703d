"""``wandb.util`` for the stand-in (``wandb/__init__.py``): navix imports it too."""


def __getattr__(name: str):
    raise ImportError(f"wandb.util.{name}: wandb is not installed on this machine (a stand-in so "
                      f"that navix imports; experiments/gpu_stubs)")
