"""The command line: parse, dispatch to one module per subcommand (``add_parser`` and
``run``), write. The console script is :func:`specgate.cli.main.main`."""
