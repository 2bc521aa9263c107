"""Readers for the files users already commit: engine serving configs, model
configs (HF ``config.json``) and measured acceptance (metrics and logs).

Each reader is a pure function from a parsed :class:`~specgate.load.document.Document`
(or text) to one of the frozen records in :mod:`specgate.inputs.types`, with the
location of every value it read, so findings can point at the referenced file.
"""
