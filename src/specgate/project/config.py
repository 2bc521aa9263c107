"""Project configuration: ``[tool.specgate]`` in ``pyproject.toml``, or ``--config FILE``.

Keys (kebab-case, as in ruff): ``fail-on`` (fail | actionable | never),
``min-accept-length`` (AL floor ≥ 1, overriding the claims files' policy, as the
CLI flag does), ``select`` and ``ignore`` (rule codes or names),
``per-file-ignores`` (glob, relative to the config file's folder → codes or names),
``exclude`` (globs, relative to the config file's folder, of files and folders the
folder search skips, on top of ``.gitignore``), ``docs-url`` (the base address of
this project's rule docs, e.g. ``https://github.com/OWNER/specgate/blob/v1/docs/rules.md``;
SARIF ``helpUri`` is given only when it is known), ``only-new`` (true | false: with
a baseline, ``--baseline`` or ``--staged``'s, findings already at the base revision
change no status; no effect without one; ``--only-new``/``--no-only-new`` override it).

Precedence: command-line flags > configuration file > built-in defaults. The
nearest ``pyproject.toml`` is searched upward from each claims file, stopping at
the git top-level; ``--config FILE`` replaces that search. Schema rules
(SG001–SG003) cannot be ignored: a gate must not pass a file it could not read.
"""

import fnmatch
import math
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from specgate.core.errors import InputError

KNOWN_KEYS = frozenset(
    {
        "fail-on",
        "min-accept-length",
        "select",
        "ignore",
        "per-file-ignores",
        "exclude",
        "docs-url",
        "only-new",
    }
)
UNIGNORABLE = frozenset({"SG001", "SG002", "SG003"})


class Config(NamedTuple):
    """A loaded configuration; ``path`` is ``None`` for the built-in defaults.

    ``unknown_rules`` lists (rule reference, 1-based line in the config file) of
    codes or names that match no rule; the checker reports them (SG004).
    """

    path: str | None = None
    fail_on: str | None = None
    min_accept_length: float | None = None
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    unknown_rules: tuple[tuple[str, int], ...] = ()
    folder: Path = Path()
    exclude: tuple[str, ...] = ()
    docs_url: str | None = None
    only_new: bool | None = None

    def excludes(self, path: Path) -> bool:
        """Whether ``path`` (a file or folder met in a folder search) matches ``exclude``."""
        if not self.exclude:
            return False
        try:
            relative = path.absolute().relative_to(self.folder.absolute()).as_posix()
        except ValueError:
            return False
        return any(
            fnmatch.fnmatch(relative, pattern.strip("/"))
            or fnmatch.fnmatch(path.name, pattern.strip("/"))
            for pattern in self.exclude
        )

    def ignored_for(self, claims_file: Path) -> frozenset[str]:
        """Codes ignored for ``claims_file`` (global ``ignore`` plus matching globs)."""
        codes = set(self.ignore)
        if self.per_file_ignores:
            try:
                relative = Path(claims_file).resolve().relative_to(self.folder.resolve())
            except ValueError:
                relative = Path(claims_file)
            text = relative.as_posix()
            for pattern, ignored in self.per_file_ignores:
                if fnmatch.fnmatch(text, pattern) or fnmatch.fnmatch(Path(text).name, pattern):
                    codes |= ignored
        return frozenset(codes)

    def enabled(self, code: str, claims_file: Path) -> bool:
        """Whether findings of ``code`` are reported for ``claims_file``."""
        if code in UNIGNORABLE:
            return True
        if self.select is not None and code not in self.select:
            return False
        return code not in self.ignored_for(claims_file)


DEFAULT = Config()


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    return 1


def matching_codes(reference: str) -> set[str]:
    """Codes a reference selects: a code or name, or a code prefix such as ``SG1``."""
    from specgate.rules.catalogue import REGISTRY, lookup

    rule = lookup(reference)
    if rule is not None:
        return {rule.code}
    prefix = reference.strip().upper()
    if len(prefix) >= 2 and prefix.startswith("SG") and prefix[2:].isdigit():
        return {code for code in REGISTRY if code.startswith(prefix)}
    return set()


_LOOKALIKE_DIGITS = str.maketrans({"O": "0", "I": "1", "L": "1"})


def rule_hint(reference: str) -> str:
    """`` (did you mean 'SG104'?)`` for a reference close to a rule code or name, else ``""``.

    ``SG1O4`` (letter O) → SG104; ``claim-over-measuremnt`` → claim-over-measurement.
    """
    import difflib

    from specgate.rules.catalogue import REGISTRY

    wanted = reference.strip()
    upper = wanted.upper()
    if upper.startswith("SG"):
        fixed = "SG" + upper[2:].translate(_LOOKALIKE_DIGITS)
        if fixed in REGISTRY or (fixed[2:].isdigit() and matching_codes(fixed)):
            return f" (did you mean {fixed!r}?)"
        close = difflib.get_close_matches(upper, sorted(REGISTRY), n=1)
    else:
        close = difflib.get_close_matches(
            wanted.lower(), sorted(r.name for r in REGISTRY.values()), n=1
        )
    return f" (did you mean {close[0]!r}?)" if close else ""


def _rules(
    value: object, key: str, shown: str, text: str
) -> tuple[frozenset[str], list[tuple[str, int]]]:
    """Codes ``value`` names. In ``select`` and ``ignore`` a reference naming no rule
    is an input error (a misspelt ``select`` would silently switch every rule off);
    in ``per-file-ignores`` it is returned for SG004.

    Raises:
        InputError: not a list of strings; an empty ``select``; an unknown reference
            in ``select``/``ignore``; an unsuppressable rule in an ignore list.
    """
    from specgate.rules.catalogue import lookup

    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"[tool.specgate] {key} must be a list of rule codes or names", shown)
    if key == "select" and not value:
        raise InputError(
            "[tool.specgate] select is empty: it would switch every rule off "
            "(name the rules to run, or remove select)",
            shown,
            _line_of(text, "select"),
        )
    codes: set[str] = set()
    unknown: list[tuple[str, int]] = []
    for reference in value:
        matched = matching_codes(reference)
        if not matched and key in ("select", "ignore"):
            raise InputError(
                f"[tool.specgate] {key}: {reference!r} names no rule{rule_hint(reference)}",
                shown,
                _line_of(text, reference),
            )
        if not matched:
            unknown.append((reference, _line_of(text, reference)))
            continue
        if key != "select":
            blocked = sorted(matched & UNIGNORABLE)
            if blocked and lookup(reference) is not None:
                raise InputError(
                    f"[tool.specgate] {key}: {blocked[0]} cannot be ignored (fix the file instead)",
                    shown,
                    _line_of(text, reference),
                )
            matched -= UNIGNORABLE
        codes |= matched
    return frozenset(codes), unknown


def parse_config(table: dict[str, Any], shown: str, text: str, folder: Path) -> Config:
    """A :class:`Config` from a ``[tool.specgate]`` table.

    Raises:
        InputError: unknown keys, wrong types or values (one line, naming the file).
    """
    for key in table:
        if key not in KNOWN_KEYS:
            import difflib

            hint = difflib.get_close_matches(key.replace("_", "-"), sorted(KNOWN_KEYS), n=1)
            suggestion = (
                f"did you mean {hint[0]!r}?" if hint else f"known: {', '.join(sorted(KNOWN_KEYS))}"
            )
            raise InputError(
                f"[tool.specgate] unknown key {key!r} ({suggestion})",
                shown,
                _line_of(text, key),
            )
    exclude = table.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(e, str) and e for e in exclude):
        raise InputError("[tool.specgate] exclude must be a list of glob patterns", shown)
    docs_url = table.get("docs-url")
    if docs_url is not None and (
        not isinstance(docs_url, str) or not docs_url.startswith(("https://", "http://"))
    ):
        raise InputError("[tool.specgate] docs-url must be an https:// address", shown)
    only_new = table.get("only-new")
    if only_new is not None and not isinstance(only_new, bool):
        raise InputError(
            "[tool.specgate] only-new must be true or false", shown, _line_of(text, "only-new")
        )
    fail_on = table.get("fail-on")
    if fail_on is not None and fail_on not in ("fail", "actionable", "never"):
        raise InputError("[tool.specgate] fail-on must be fail, actionable or never", shown)
    floor = table.get("min-accept-length")
    if floor is not None and (
        isinstance(floor, bool)
        or not isinstance(floor, int | float)
        or not math.isfinite(floor)
        or floor < 1
    ):
        raise InputError("[tool.specgate] min-accept-length must be a number ≥ 1", shown)
    unknown: list[tuple[str, int]] = []
    select = None
    if "select" in table:
        select, missing = _rules(table["select"], "select", shown, text)
        unknown += missing
    ignore, missing = _rules(table.get("ignore", []), "ignore", shown, text)
    unknown += missing
    per_file: list[tuple[str, frozenset[str]]] = []
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise InputError(
            "[tool.specgate] per-file-ignores must be a table of glob = [rules]", shown
        )
    for pattern, references in raw_per_file.items():
        codes, missing = _rules(references, "per-file-ignores", shown, text)
        unknown += missing
        per_file.append((pattern, codes))
    return Config(
        path=shown,
        fail_on=fail_on,
        min_accept_length=None if floor is None else float(floor),
        select=select,
        ignore=ignore,
        per_file_ignores=tuple(per_file),
        unknown_rules=tuple(unknown),
        folder=folder,
        exclude=tuple(exclude),
        docs_url=docs_url,
        only_new=only_new,
    )


def load_config(path: Path, shown: str, *, explicit: bool) -> Config | None:
    """Read a TOML file's ``[tool.specgate]`` table (or, for ``--config``, a file
    whose top level is that table). ``None`` when a pyproject has no such table; one
    that surely has none is not parsed (:mod:`specgate.project.tool_table`), so the TOML
    syntax of a pyproject.toml that does not configure specgate is its own tools' to check.

    Raises:
        InputError: unreadable file, TOML syntax error, bad table.
    """
    from specgate.load.read import read_text

    text = read_text(path, shown)
    if not explicit:
        from specgate.project.tool_table import may_hold_table

        if not may_hold_table(text):
            return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"TOML syntax error: {exc}", shown) from None
    table = data.get("tool", {}).get("specgate") if isinstance(data.get("tool"), dict) else None
    if table is None:
        if not explicit:
            return None
        table = {k: v for k, v in data.items() if k != "tool"}
    if not isinstance(table, dict):
        raise InputError("[tool.specgate] must be a table", shown)
    return parse_config(table, shown, text, path.parent)


class ConfigFinder:
    """Finds and caches the configuration in force for each claims file."""

    def __init__(self, explicit: Config | None = None) -> None:
        self.explicit = explicit
        self.cache: dict[Path, Config] = {}
        #: The configuration of each folder as written (a run's files share a few).
        self.by_folder: dict[str, Config] = {}

    def for_file(self, claims_file: Path) -> Config:
        """The nearest ``pyproject.toml`` with ``[tool.specgate]`` upward from the
        file, stopping at the git top-level (or the explicit ``--config``)."""
        if self.explicit is not None:
            return self.explicit
        folder = os.path.dirname(os.path.abspath(claims_file))
        config = self.by_folder.get(folder)
        if config is None:
            from specgate.core.paths import real_folder

            config = self.by_folder[folder] = self.for_folder(real_folder(Path(folder)))
        return config

    def for_folder(self, folder: Path) -> Config:
        """As :meth:`for_file`, starting at ``folder``."""
        if folder in self.cache:
            return self.cache[folder]
        found: Config | None = None
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            from specgate.core.paths import shown_path

            found = load_config(candidate, shown_path(candidate), explicit=False)
        if found is None:
            at_top = (folder / ".git").exists() or folder.parent == folder
            found = DEFAULT if at_top else self.for_folder(folder.parent)
        self.cache[folder] = found
        return found
