"""The parts the algorithms are built from, below the algorithm layer: networks (torsos, heads,
actor-critics, Q-networks, recurrent cores, the user's own), the one env-step record, env
stepping and action scaling, evaluation, on-device replay (`buffers`), the memory plan, and the
in-jit diagnostics with their metric catalogue.

Nothing here imports the algorithm layer, the engine, the run store, trained results, the API,
the studies or the CLI (`tests/test_layout.py`'s ``WING_RULES``). This file imports nothing:
a JAX-free part (the metric catalogue) stays JAX-free to import.
"""
