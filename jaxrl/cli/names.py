"""Names the ``jaxrl`` parser shows in its help, as plain tuples: the parser must not import the
algorithm or env registries (they load JAX), so ``jaxrl --help`` stays fast. Tests check these
against the registries (``ALGORITHMS == sorted(jaxrl.algos.ALGORITHMS)``)."""

from __future__ import annotations

#: `jaxrl.algos.ALGORITHMS`, sorted.
ALGORITHMS: tuple[str, ...] = ("a2c", "acer", "bc", "c51", "ddpg", "dqn", "gail", "ppo", "pqn",
                               "qrdqn", "sac", "td3", "trpo", "vpg")

#: The families of `envs.env_family`, in the order ``jaxrl envs`` lists them.
ENV_FAMILIES: tuple[str, ...] = ("probe", "discrete", "continuous", "minatar", "atari", "brax")

ALGO_HELP = f"one of: {', '.join(ALGORITHMS)}"
