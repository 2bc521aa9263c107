"""Find claims files: named files as given, folders searched for the default names.

Default names (DESIGN.md §2): ``specgate.yaml``, ``.specgate.yaml``,
``*.specgate.yaml``, and the same with ``.yml`` and ``.json``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from specgate.errors import UsageError

CLAIMS_NAME = re.compile(r"^(?:\.?specgate|.+\.specgate)\.(?:ya?ml|json)$")
SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        "site-packages",
        ".eggs",
    }
)


def is_claims_name(name: str) -> bool:
    """Whether a file name is one of the default claims-file names."""
    return CLAIMS_NAME.match(name) is not None


def shown_path(path: Path, cwd: Path | None = None) -> str:
    """``path`` relative to the current folder with ``/`` separators (absolute when
    it cannot be made relative, e.g. another drive)."""
    base = cwd or Path.cwd()
    try:
        relative = os.path.relpath(path.absolute(), base)
    except ValueError:  # pragma: no cover - Windows: another drive
        return path.absolute().as_posix()
    return Path(relative).as_posix()


def _skip(folder: Path) -> bool:
    """Folders never searched: VCS data, virtual environments, caches, build metadata."""
    name = folder.name
    return name in SKIPPED_FOLDERS or name.endswith(".egg-info") or (folder / "pyvenv.cfg").exists()


def _search(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _skip(Path(root) / d))
        found.extend(Path(root) / f for f in files if is_claims_name(f))
    return found


def discover(paths: list[str]) -> list[tuple[Path, str]]:
    """Claims files for the CLI's PATH arguments, sorted by shown path, no repeats.

    Raises:
        UsageError: a PATH that does not exist, or a folder holding no claims file
            (a gate that silently checks nothing passes everything).
    """
    seen: dict[Path, str] = {}
    for given in paths or ["."]:
        path = Path(given)
        if path.is_dir():
            matches = _search(path)
            if not matches:
                raise UsageError(
                    f"{given}: no claims file found (looked for specgate.yaml, .specgate.yaml, "
                    "*.specgate.yaml and the .yml/.json forms)"
                )
        elif path.exists() or path.is_symlink():
            matches = [path]
        else:
            raise UsageError(f"{given}: no such file or folder")
        for match in matches:
            key = Path(os.path.realpath(match))
            seen.setdefault(key, shown_path(match))
    return sorted(((Path(p), s) for p, s in seen.items()), key=lambda pair: pair[1])
