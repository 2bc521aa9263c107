"""Bytes to a :class:`~specgate.load.document.Document` with positions: reading a file safely,
the YAML and JSON loaders that keep 1-based line and column of every node."""
