"""Benchmark suites (`suite`), their runs (`runner`, on Ray: `remote`), verdicts against the
published references (`judge`), the report (`report`, `markdown`) and its figure (`figure`)."""
