"""Benchmark suites (`suite`), their runs (`runner`, on Ray: `remote`), verdicts against the
published references (`judge`), the report (`report`, `markdown`; a results file read back is
checked by `results_file`) and its figure (`figure`)."""
