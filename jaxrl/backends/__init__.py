"""Where sweep groups run: locally (the default, in `jaxrl.sweep`) or on a Ray cluster (`ray`)."""
