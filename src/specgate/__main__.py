"""``python -m specgate`` runs the same CLI as the console script."""

from __future__ import annotations

from specgate.cli.main import entry

if __name__ == "__main__":
    entry()
