"""Measured acceptance read from metrics files, logs and inline blocks (DESIGN.md §7); the
dispatch is :mod:`specgate.inputs.metrics.read`."""
