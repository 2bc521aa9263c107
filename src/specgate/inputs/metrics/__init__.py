"""Measured acceptance read from metrics files, logs and inline blocks
(docs/engines.md#metrics-formats); the dispatch is :mod:`specgate.inputs.metrics.read`."""
