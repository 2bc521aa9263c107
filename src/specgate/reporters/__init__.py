"""Reporters: each turns a report into text, no I/O; ``--format`` picks one by name from
:data:`specgate.reporters.formats.FORMATS`."""
