"""Sweeps (`runner`), their compiled groups (`groups`), and what the store holds of them
(`manifest`, `table`)."""
