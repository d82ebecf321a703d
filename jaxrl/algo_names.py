"""The built-in algorithms by name: the one line that registers a new one. Each name is a
module of `jaxrl.algos` ending in the line that makes its `Algorithm` (whose name it is);
`jaxrl.algos` imports them in this order, and the CLI's help lists them without loading JAX
(`jaxrl.cli.names`). A plain tuple: importing this module imports nothing."""

BUILT_IN: tuple[str, ...] = ("ppo", "vpg", "a2c", "trpo", "dqn", "c51", "qrdqn", "iqn", "pqn",
                             "ddpg", "td3", "sac", "acer", "gail", "bc")
