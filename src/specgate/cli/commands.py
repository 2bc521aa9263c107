"""The subcommands: each one's module and its line in ``specgate --help``, in the order
``--help`` lists them. A new subcommand is one module (``add_parser`` and ``run``) and
one row here; a module is imported only when its command runs or its ``--help`` is
asked for (the others are listed by their line alone)."""

#: Subcommand → (its module, its line in ``specgate --help``); plain tuples, as this is
#: read at every start-up.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("specgate.cli.check", "check claims files (the main job)"),
    "doctor": ("specgate.cli.doctor", "check one deployment given as flags (no file needed)"),
    "init": ("specgate.cli.init", "write a commented starter claims file"),
    "schema": ("specgate.cli.schema", "print the claims-file JSON Schema"),
    "digest": ("specgate.cli.digest", "print each deployment's config digest"),
    "measure": (
        "specgate.cli.measure",
        "measure AL from an engine's metrics and print or write the evidence block",
    ),
    "rules": ("specgate.cli.rules", "list the rules, or show one rule's doc"),
}
