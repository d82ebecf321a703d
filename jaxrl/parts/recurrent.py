"""Recurrent policies: a GRU or LSTM core between the torso and the heads of an actor-critic,
and the memory it carries from step to step.

* `RecurrentActorCritic`: ``(memory, obs, first) -> (memory, dist, value)`` for one step;
* `unroll`: the same over a ``[T, N]`` sequence, from the memory before its first step (the
  torso batched over every step, the cores scanned over time);
* `zero_memory` / `reset_memory`: the memory at an episode start, and zeroing it where an
  episode ended (used by the rollout and by evaluation for any policy; a feed-forward policy's
  memory is ``()``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from envs.spaces import Space
from jaxrl.ops.init import orthogonal
from jaxrl.parts.heads import MLP, PolicyHead
from jaxrl.parts.torsos import Torso


class Weights(nn.Module):
    """A dense layer's parameters (``kernel [F, H]``, ``bias [H]`` where ``bias``), named and
    initialized as `flax.linen.Dense` names and initializes them, returned unapplied."""

    features: int
    kernel_init: Any
    bias: bool = True

    @nn.compact
    def __call__(self, fan_in: int):
        kernel = self.param("kernel", self.kernel_init, (fan_in, self.features), jnp.float32)
        if not self.bias:
            return kernel, jnp.zeros((self.features,), jnp.float32)
        return kernel, self.param("bias", nn.initializers.zeros_init(), (self.features,),
                                  jnp.float32)


class GRU(nn.Module):
    """flax's `GRUCell`, its parameters included (same names, same initialization), computed
    in two parts so that a sequence pays for its inputs once:

        r = sigmoid(W_ir x + b_ir + W_hr h)       project(x) = [W_ir; W_iz; W_in] x + b_i
        z = sigmoid(W_iz x + b_iz + W_hz h)       (one product for all steps of a sequence)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h                  recur(h, projected): one [H, 3H] product

    ``__call__(h, x)`` is one step, as `GRUCell`'s."""

    features: int
    recurrent_kernel_init: Any = nn.initializers.orthogonal()

    def setup(self):
        i = functools.partial(Weights, self.features, nn.initializers.lecun_normal())
        h = functools.partial(Weights, self.features, self.recurrent_kernel_init)
        self.ir, self.iz, self.in_ = i(name="ir"), i(name="iz"), i(name="in")
        self.hr, self.hz = h(bias=False, name="hr"), h(bias=False, name="hz")
        self.hn = h(name="hn")

    def project(self, x: jax.Array) -> jax.Array:
        """``x [..., F] -> [..., 3H]``: the three gates' input products."""
        kernels, biases = zip(*(w(x.shape[-1]) for w in (self.ir, self.iz, self.in_)),
                              strict=True)
        return x @ jnp.concatenate(kernels, -1) + jnp.concatenate(biases, -1)

    def recur(self, h: jax.Array, projected: jax.Array) -> tuple[jax.Array, jax.Array]:
        """One step from the projected input ``[..., 3H]``: ``(h', h')``."""
        kernels, biases = zip(*(w(h.shape[-1]) for w in (self.hr, self.hz, self.hn)),
                              strict=True)
        xr, xz, xn = jnp.split(projected, 3, axis=-1)
        hr, hz, hn = jnp.split(h @ jnp.concatenate(kernels, -1) + jnp.concatenate(biases, -1),
                               3, axis=-1)
        r, z = jax.nn.sigmoid(xr + hr), jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * hn)
        h = (1.0 - z) * n + z * h
        return h, h

    def __call__(self, h: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self.recur(h, self.project(x))


class LSTM(nn.OptimizedLSTMCell):
    """flax's `OptimizedLSTMCell`, with `GRU`'s two parts (its inputs are not projected apart)."""

    def project(self, x: jax.Array) -> jax.Array:
        return x

    def recur(self, carry, x):
        return self(carry, x)


#: Recurrent cores by config name (``rnn``); "none" is the feed-forward `ActorCritic`.
CELLS: dict[str, type] = {"gru": GRU, "lstm": LSTM}
RNNS = ("none", *CELLS)


def zero_memory(rnn: str, size: int, lead: Sequence[int], cores: int) -> tuple:
    """The memory of ``cores`` recurrent cores at an episode start: per core ``[*lead, size]``
    zeros (GRU), or the pair ``(c, h)`` of them (LSTM)."""
    zeros = jnp.zeros((*lead, size), jnp.float32)
    return tuple(zeros if rnn == "gru" else (zeros, zeros) for _ in range(cores))


def reset_memory(memory, done: jax.Array):
    """``memory`` (leaves ``[*lead, ...]``) zeroed where ``done [*lead]``: an episode that
    starts next begins from the zero memory. A feed-forward policy's ``()`` passes through."""
    def reset(m):
        return jnp.where(done.reshape(done.shape + (1,) * (m.ndim - done.ndim)), 0.0, m)

    return jax.tree.map(reset, memory)


class RecurrentActorCritic(nn.Module):
    """`ActorCritic` with a recurrent core (``rnn``: GRU or LSTM of ``rnn_size`` units) between
    the torso and the heads. ``shared=True``: one torso and core under a policy head and a value
    head, memory ``(core,)``; else the policy and the value network each have a torso and a core
    of their own, memory ``(policy core, value core)``. The heads are linear, or each an MLP of
    ``head_hidden`` layers (Craftax_Baselines' PPO-RNN: one 512 ReLU layer, the GRU, two 512
    ReLU layers in each head). As in `ActorCritic`, the policy head lives under
    ``params["params"]["policy"]`` and the value head under ``["value_net"]``.

    One step: ``__call__(memory, obs [..., obs_dim], first [...]) -> (memory, dist, value)``,
    the memory zeroed first where ``first`` (an episode's first step). A sequence is run by
    `unroll`, which batches the torso over all its steps. ``dist(obs)`` / ``value(obs)`` answer
    for the first step of an episode (zero memory): what a probe's query observation is."""

    action_space: Space
    hidden: Sequence[int] = (64, 64)
    activation: str = "tanh"
    init_log_std: float = 0.0
    shared: bool = False
    torso_kind: str = "mlp"
    rnn: str = "gru"
    rnn_size: int = 128
    head_hidden: Sequence[int] = ()

    def setup(self):
        cores = 1 if self.shared else 2
        self.torsos = [Torso(self.hidden, self.activation, self.torso_kind) for _ in range(cores)]
        # recurrent kernels orthogonal without LAPACK (`jaxrl.ops.init`: flax's default QR
        # deadlocked XLA:CPU when batched over seeds)
        self.cores = [CELLS[self.rnn](self.rnn_size, recurrent_kernel_init=orthogonal())
                      for _ in range(cores)]
        heads = tuple(self.head_hidden)
        self.policy = PolicyHead(self.action_space, heads, self.activation, self.init_log_std)
        self.value_net = MLP(heads, 1, self.activation, 1.0)

    def features(self, obs: jax.Array) -> tuple:
        """``obs [..., obs_dim]`` -> each core's input: its torso's features, projected by
        the core's input weights (a GRU's three gates), ``[..., F]``."""
        return tuple(cell.project(torso(obs)) for torso, cell in zip(self.torsos, self.cores,
                                                                     strict=True))

    def core(self, memory: tuple, features: tuple, first: jax.Array) -> tuple[tuple, tuple]:
        """One step of every core from its input: ``(memory, outputs)``, each
        ``[..., rnn_size]``."""
        memory = reset_memory(memory, first)
        stepped = [cell.recur(m, f) for cell, m, f in zip(self.cores, memory, features,
                                                           strict=True)]
        return tuple(m for m, _ in stepped), tuple(y for _, y in stepped)

    def heads(self, outputs: tuple):
        """The policy from the first core's output, the value ``[...]`` from the last's."""
        return self.policy(outputs[0]), self.value_net(outputs[-1])[..., 0]

    def __call__(self, memory: tuple, obs: jax.Array, first: jax.Array):
        memory, outputs = self.core(memory, self.features(obs), first)
        return (memory, *self.heads(outputs))

    def initial_memory(self, lead: Sequence[int]) -> tuple:
        return zero_memory(self.rnn, self.rnn_size, lead, 1 if self.shared else 2)

    def _first_step(self, obs: jax.Array):
        lead = obs.shape[:-1]
        return self(self.initial_memory(lead), obs, jnp.ones(lead, bool))

    def dist(self, obs: jax.Array):
        return self._first_step(obs)[1]

    def value(self, obs: jax.Array) -> jax.Array:
        return self._first_step(obs)[2]


def unroll(network: RecurrentActorCritic, params, memory: tuple, obs: jax.Array,
           first: jax.Array):
    """Run a recurrent network over a sequence: ``memory`` (leaves ``[N, ...]``) before the
    first step, ``obs [T, N, obs_dim]``, ``first [T, N]`` (reset the memory before that step).
    Returns ``(memories after each step [T, N, ...], dist over [T, N], value [T, N])``."""
    features = network.apply(params, obs, method=network.features)

    def step(m, xs):
        f, fst = xs
        m, out = network.apply(params, m, f, fst, method=network.core)
        return m, (m, out)

    _, (memories, outputs) = jax.lax.scan(step, memory, (features, first))
    return (memories, *network.apply(params, outputs, method=network.heads))
