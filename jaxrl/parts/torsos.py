"""Torsos: the layers between a flat observation and a network's heads (`jaxrl.parts.heads`).

* ``mlp``: hidden Dense layers (orthogonal init, gain sqrt 2) with the config's activation;
* conv torsos (`CONV_TORSOS`): the flat vector folded back into its image, then convolutions
  and a dense layer (``minatar_cnn`` for 10x10xC grids, ``nature_cnn`` and ``nature_cnn_small``
  for 84x84xk frames); ``auto`` picks by the observation's shape (`resolve_torso`);
* your own (`register_torso`, or an import path ``package.module:factory``): a factory called
  with no arguments that returns a Flax module ``[..., obs_dim] -> [..., features]``, used by
  every algorithm whose networks have a torso (the actor-critics, the Q-networks); an import
  path is what a stored run, a resumed run and a reloaded policy can find again in another
  process, a registered name only in the process that registered it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.config import ConfigError
from jaxrl.ops.init import orthogonal
from jaxrl.parts import user_factories

ACTIVATIONS: dict[str, Callable] = {"tanh": jnp.tanh, "relu": nn.relu, "elu": nn.elu, "silu": nn.silu}



def dense(features: int, gain: float) -> nn.Dense:
    return nn.Dense(features, kernel_init=orthogonal(gain),
                    bias_init=nn.initializers.zeros)


# -- torsos ------------------------------------------------------------------------------------
TORSOS = ("auto", "mlp", "minatar_cnn", "nature_cnn", "nature_cnn_small")

#: Conv torsos: ``(side of the square input, [(filters, kernel, stride)], dense width)``, VALID
#: padding, ReLU after every layer, the dense layer last (its output is the torso's feature).
CONV_TORSOS: dict[str, tuple[int, tuple, int]] = {
    # Young & Tian 2019 (MinAtar): one 3x3 conv of 16 filters, then 128 units.
    "minatar_cnn": (10, ((16, 3, 1),), 128),
    # Mnih et al. 2015 (Nature DQN): 32 8x8/4, 64 4x4/2, 64 3x3/1, then 512 units.
    "nature_cnn": (84, ((32, 8, 4), (64, 4, 2), (64, 3, 1)), 512),
    # Reading 002's TRPO on Atari (vel's NatureCnnSmall): 8 8x8/4, 16 4x4/2, then 128 units.
    # After nature_cnn: ``auto`` takes the first torso that fits a shape.
    "nature_cnn_small": (84, ((8, 8, 4), (16, 4, 2)), 128),
}


def check_network_fields(activation: str, torso: str, verbosity: str, levels: Sequence[str]
                         ) -> None:
    """The config checks every algorithm shares: a known activation, torso and diagnostics
    level (``levels``: `jaxrl.parts.diagnostics.LEVELS`); `ConfigError` naming the bad value."""
    if verbosity not in levels:
        raise ConfigError(f"verbosity must be one of {tuple(levels)}, got {verbosity!r}")
    if activation not in ACTIVATIONS:
        raise ConfigError(f"unknown activation {activation!r}")
    check_torso(torso)


def resolve_torso(torso: str, obs_shape: Sequence[int]) -> str:
    """The concrete torso for observations of ``obs_shape``: ``auto`` picks by rank and size
    (a ``[10, 10, C]`` grid -> ``minatar_cnn``, an ``[84, 84, k]`` stack -> ``nature_cnn``,
    anything else -> ``mlp``); an explicit conv torso is checked against the shape.
    Raises `ConfigError` (one line) for an unknown name or a shape the torso cannot read."""
    check_torso(torso)
    if is_custom(torso):  # the user's module reads the flat observation as it likes
        return torso
    shape = tuple(int(d) for d in obs_shape)
    image = {kind: len(shape) == 3 and shape[0] == shape[1] == side
             for kind, (side, _, _) in CONV_TORSOS.items()}
    if torso == "auto":
        return next((kind for kind, fits in image.items() if fits), "mlp")
    if torso != "mlp" and not image[torso]:
        side = CONV_TORSOS[torso][0]
        raise ConfigError(f"torso {torso!r} reads [{side}, {side}, C] observations; this env's "
                          f"are {list(shape)}")
    return torso


def hidden_layers(x: jax.Array, hidden: Sequence[int], activation: str,
                   layer_norm: bool = False) -> jax.Array:
    """Dense (+ LayerNorm) + activation per width (called inside a compact module, which names
    the layers)."""
    act = ACTIVATIONS[activation]
    for width in hidden:
        x = normalized(dense(width, np.sqrt(2.0))(x), layer_norm)
        x = act(x)
    return x


def normalized(x: jax.Array, layer_norm: bool) -> jax.Array:
    """``x`` through a LayerNorm over its last axis (learned scale and bias) when ``layer_norm``
    (PQN's networks: after every hidden layer, before the activation), else as it is."""
    return nn.LayerNorm()(x) if layer_norm else x


class ConvTorso(nn.Module):
    """``[..., side*side*C] -> [..., dense width]``: unflatten to ``[side, side, C]``, then the
    conv layers and the dense layer of ``CONV_TORSOS[kind]`` (ReLU, orthogonal init); with
    ``layer_norm`` a LayerNorm (over the channels, or the dense units) before every ReLU."""

    kind: str
    layer_norm: bool = False

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        side, convs, width = CONV_TORSOS[self.kind]
        lead = x.shape[:-1]
        x = x.reshape(-1, side, side, x.shape[-1] // (side * side))
        for i, (filters, kernel, stride) in enumerate(convs):
            w = self.param(f"conv_{i}_kernel", orthogonal(np.sqrt(2.0)),
                           (kernel, kernel, x.shape[-1], filters))
            b = self.param(f"conv_{i}_bias", nn.initializers.zeros, (filters,))
            x = nn.relu(normalized(conv2d_valid(x, w, stride) + b, self.layer_norm))
        x = dense(width, np.sqrt(2.0))(x.reshape(x.shape[0], -1))
        x = nn.relu(normalized(x, self.layer_norm))
        return x.reshape(*lead, width)


def conv2d_valid(x: jax.Array, kernel: jax.Array, stride: int) -> jax.Array:
    """``[N, H, W, C] * [k, k, C, F] -> [N, H', W', F]``, VALID padding.

    On the CPU as one matrix product over the k*k shifted (strided) views of ``x`` (im2col):
    XLA's CPU convolution, backward pass included, made MinAtar PPO ~12x slower than the MLP
    (849 vs 10.6k env-steps/s per seed); elsewhere XLA's own convolution."""
    if jax.default_backend() != "cpu":
        return jax.lax.conv_general_dilated(x, kernel, (stride, stride), "VALID",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
    k, _, c, f = kernel.shape
    out_h, out_w = (x.shape[1] - k) // stride + 1, (x.shape[2] - k) // stride + 1
    views = [x[:, i:i + stride * (out_h - 1) + 1:stride, j:j + stride * (out_w - 1) + 1:stride]
             for i in range(k) for j in range(k)]  # (i, j, c) order, as kernel.reshape below
    return jnp.concatenate(views, axis=-1) @ kernel.reshape(k * k * c, f)


def conv_units(kind: str, channels: int) -> int:
    """Activation floats per sample of a `ConvTorso` on ``channels`` input channels: every conv
    layer's output and its im2col patch matrix (the memory plan's working set)."""
    side, convs, _ = CONV_TORSOS[kind]
    units = 0
    for filters, kernel, stride in convs:
        side = (side - kernel) // stride + 1
        units += side * side * (filters + kernel * kernel * channels)
        channels = filters
    return units


def trunk(x: jax.Array, torso: str, hidden: Sequence[int], activation: str,
           layer_norm: bool = False) -> jax.Array:
    """The layers under an output head: the MLP's hidden layers (``mlp``; ``auto`` not resolved
    against an env is the MLP), a `ConvTorso` (whose dense layer replaces ``hidden``), or the
    user's module (`custom_torso`, which replaces them too); with ``layer_norm`` a LayerNorm
    before every activation of the built-in ones."""
    if torso in ("mlp", "auto"):
        return hidden_layers(x, hidden, activation, layer_norm)
    if torso in CONV_TORSOS:
        return ConvTorso(torso, layer_norm)(x)
    return custom_torso(torso)(x)


class Torso(nn.Module):
    """``[..., in] -> [..., features]``: the hidden layers of an MLP (or a conv torso), without
    an output layer."""

    hidden: Sequence[int]
    activation: str = "tanh"
    torso: str = "mlp"
    layer_norm: bool = False

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return trunk(x, self.torso, self.hidden, self.activation, self.layer_norm)


# -- the user's torsos -------------------------------------------------------------------------
#: torsos registered in this process, by name (`register_torso`)
REGISTERED: dict[str, Callable[[], nn.Module]] = {}


def register_torso(name: str, factory: Callable[[], nn.Module]) -> None:
    """Make ``name`` a torso (``torso=name`` in any config with a torso): ``factory()`` returns a
    Flax module ``[..., obs_dim] -> [..., features]``. Only this process knows the name: a run
    stored with it reloads where the same registration runs first (an import path,
    ``package.module:factory``, is found anywhere the package imports)."""
    user_factories.register(name, factory, REGISTERED, "torso", TORSOS)


def is_custom(torso: str) -> bool:
    """Whether ``torso`` names a user's torso (registered, or an import path)."""
    return user_factories.is_user_name(torso, REGISTERED)


def custom_torso(torso: str) -> nn.Module:
    """A fresh module of the user's torso ``torso`` (`register_torso`, or an import path)."""
    return user_factories.made(torso, REGISTERED, "torso")


def check_torso(torso: str) -> None:
    """One-line `ConfigError` unless ``torso`` is a built-in torso, a registered one or an
    import path that resolves to a factory."""
    if not isinstance(torso, str):
        raise ConfigError(f"torso must be a name, got {type(torso).__name__}")
    if torso in TORSOS or torso in REGISTERED:
        return
    if ":" in torso:
        user_factories.find(torso, REGISTERED, "torso")
        return
    raise ConfigError(f"unknown torso {torso!r}; choose one of {', '.join(TORSOS)}, a name "
                      f"given to jaxrl.parts.torsos.register_torso, or an import path "
                      f"package.module:factory")
