"""``python -m specgate`` runs the same CLI as the console script."""

from __future__ import annotations

import sys

from specgate.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
