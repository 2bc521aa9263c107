"""Print the cache key of the Action's specgate environment (a hex digest).

Run by action.yml as ``python -I scripts/environment_key.py ACTION_PATH``. The key
hashes what the installed environment depends on: the interpreter (its path and
full version), and every file ``pip install ACTION_PATH`` reads (``pyproject.toml``,
``README.md`` and the ``src/`` tree, ``__pycache__`` excluded). A cached
environment is therefore reused only when it was built from these exact files by
this exact interpreter; anything else builds a new one.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path


def environment_key(action_path: Path) -> str:
    """The hex digest (32 characters) for the action checked out at ``action_path``."""
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\n{sys.version}\n".encode())
    files = [action_path / "pyproject.toml", action_path / "README.md"]
    files += sorted(
        p for p in (action_path / "src").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(action_path).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


if __name__ == "__main__":
    print(environment_key(Path(sys.argv[1])))
