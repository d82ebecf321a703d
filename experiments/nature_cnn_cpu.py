"""Where the Nature CNN's forward pass spends its time on this CPU, and whether a rewrite of its
convolutions helps: the question behind the Atari issue's 1.5x rollout-over-floor target.

Prints one JSON line per measurement: each layer alone (ms, GFLOP/s) for a batch of ``--batch``
84x84x4 observations, then the whole forward pass as XLA's convolutions and as three rewrites
that compute the same function (checked against it):

* ``space_to_depth``: the 8x8/4 and 4x4/2 convolutions as 2x2/1 convolutions over
  space-to-depth inputs (4x4 and 2x2 blocks moved into channels);
* ``patches_dot``: every convolution as XLA's patch extraction, then one matrix product;
* ``slices_dot``: space-to-depth, then the k x k windows as k*k slices concatenated into
  features, then one matrix product.

Usage: python experiments/nature_cnn_cpu.py [--batch 16] [--repeats 50]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

DN = ("NHWC", "HWIO", "NHWC")
#: (name, input side, kernel, in channels, out channels, stride) of the three convolutions.
CONVS = (("conv1", 84, 8, 4, 32, 4), ("conv2", 20, 4, 32, 64, 2), ("conv3", 9, 3, 64, 64, 1))
FC_IN, FC_OUT = 3136, 512


def best_ms(fn: Callable, *args, repeats: int) -> float:
    """Best of 5 rounds of ``repeats`` calls, in ms per call (compiled and warmed first)."""
    fn(*args).block_until_ready()
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            out = fn(*args)
        out.block_until_ready()
        rounds.append((time.perf_counter() - start) / repeats)
    return 1e3 * min(rounds)


def conv(x: jax.Array, w: jax.Array, stride: int) -> jax.Array:
    return lax.conv_general_dilated(x, w, (stride, stride), "VALID", dimension_numbers=DN)


def space_to_depth(x: jax.Array, b: int) -> jax.Array:
    """``[N, H, W, C] -> [N, H/b, W/b, b*b*C]``, each b x b block's pixels as channels."""
    n, h, w, c = x.shape
    x = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(n, h // b, w // b, b * b * c)


def kernel_to_depth(w: jax.Array, b: int) -> jax.Array:
    """A ``[2b, 2b, C, O]`` kernel of stride b as the ``[2, 2, b*b*C, O]`` kernel of stride 1
    over ``space_to_depth(x, b)``."""
    _, _, c, o = w.shape
    w = w.reshape(2, b, 2, b, c, o).transpose(0, 2, 1, 3, 4, 5)
    return w.reshape(2, 2, b * b * c, o)


def windows(x: jax.Array, k: int) -> jax.Array:
    """Stride-1 k x k windows as features, ordered (row, column, channel):
    ``[N, H, W, C] -> [N, H-k+1, W-k+1, k*k*C]``."""
    _, h, w, _ = x.shape
    return jnp.concatenate([x[:, i:i + h - k + 1, j:j + w - k + 1] for i in range(k)
                            for j in range(k)], axis=-1)


def forwards(ws: list[jax.Array], fc: jax.Array) -> dict[str, Callable]:
    """The forward pass (three ReLU convolutions, then the ReLU dense layer) four ways."""
    w1, w2, w3 = ws

    def head(h):
        return jax.nn.relu(h.reshape(h.shape[0], -1) @ fc)

    def plain(x):
        for w, (_, _, _, _, _, s) in zip(ws, CONVS):
            x = jax.nn.relu(conv(x, w, s))
        return head(x)

    def s2d(x):
        x = jax.nn.relu(conv(space_to_depth(x, 4), kernel_to_depth(w1, 4), 1))
        x = jax.nn.relu(conv(space_to_depth(x, 2), kernel_to_depth(w2, 2), 1))
        return head(jax.nn.relu(conv(x, w3, 1)))

    def patches_dot(x):
        for w, (_, _, k, c, o, s) in zip(ws, CONVS):
            p = lax.conv_general_dilated_patches(x, (k, k), (s, s), "VALID", dimension_numbers=DN)
            x = jax.nn.relu(p @ w.transpose(2, 0, 1, 3).reshape(c * k * k, o))  # (C, kh, kw)
        return head(x)

    def slices_dot(x):
        for w, b in ((kernel_to_depth(w1, 4), 4), (kernel_to_depth(w2, 2), 2), (w3, 1)):
            x = space_to_depth(x, b) if b > 1 else x
            k, _, c, o = w.shape
            x = jax.nn.relu(windows(x, k) @ w.reshape(k * k * c, o))
        return head(x)

    return {"xla_conv": plain, "space_to_depth": s2d, "patches_dot": patches_dot,
            "slices_dot": slices_dot}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    n = args.batch
    keys = jax.random.split(jax.random.PRNGKey(0), 5)
    ws = [jax.random.normal(keys[i], (k, k, c, o)) * (2.0 / (k * k * c)) ** 0.5
          for i, (_, _, k, c, o, _) in enumerate(CONVS)]
    fc = jax.random.normal(keys[3], (FC_IN, FC_OUT)) * (2.0 / FC_IN) ** 0.5
    obs = jax.random.uniform(keys[4], (n, 84, 84, 4))

    total_flop = 0.0
    for w, (name, side, k, c, o, s) in zip(ws, CONVS):
        x = jnp.zeros((n, side, side, c))
        out_side = (side - k) // s + 1
        flop = 2.0 * n * out_side * out_side * k * k * c * o
        ms = best_ms(jax.jit(lambda x, w, s=s: jax.nn.relu(conv(x, w, s))), x, w,
                     repeats=args.repeats)
        total_flop += flop
        print(json.dumps({"part": name, "ms": round(ms, 3), "gflop_s": round(flop / ms / 1e6, 1)}))
    flop = 2.0 * n * FC_IN * FC_OUT
    ms = best_ms(jax.jit(lambda x, w: jax.nn.relu(x @ w)), jnp.zeros((n, FC_IN)), fc,
                 repeats=args.repeats)
    total_flop += flop
    print(json.dumps({"part": "dense", "ms": round(ms, 3), "gflop_s": round(flop / ms / 1e6, 1)}))

    fns = forwards(ws, fc)
    reference = jax.jit(fns["xla_conv"])(obs)
    for name, fn in fns.items():
        jitted = jax.jit(fn)
        out = jitted(obs)
        rel = float(jnp.max(jnp.abs(out - reference)) / jnp.max(jnp.abs(reference)))
        if rel > 1e-4:
            raise SystemExit(f"{name} computes another function (relative difference {rel:.1e})")
        ms = best_ms(jitted, obs, repeats=args.repeats)
        print(json.dumps({"forward": name, "batch": n, "ms": round(ms, 3),
                          "gflop_s": round(total_flop / ms / 1e6, 1),
                          "max_rel_diff": float(f"{rel:.1e}")}))


if __name__ == "__main__":
    main()
