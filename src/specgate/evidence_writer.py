"""``specgate measure --write``: replace one deployment's evidence in a YAML claims
file, keeping everything else as it was (DESIGN.md §9.4, §9.5).

The edit is a round trip through ruamel.yaml (the optional extra ``measure``:
``pip install 'specdec-gate[measure]'``), which keeps comments, key order, quotes
and flow style. Its indentation is set from the file itself (the mapping indent,
the sequence indent and the dash offset of ``deployments``), not guessed. Then
the result is compared line by line with the original: every line outside the
deployment being written must be byte-identical, else nothing is written and the
command fails naming the first line the library would have changed.

Inside the written deployment ``accept_length``, ``metrics`` and ``provenance``
are replaced (``metrics`` removed when the new evidence has none) and every other
evidence key is kept. What may change inside that deployment: the style of the
values written (a quoted date, flow-style lists), and an end-of-line comment on a
removed line goes with it; comment lines after the block are kept in place.
"""

from __future__ import annotations

import difflib
import io
import re
from pathlib import Path
from typing import Any

from specgate.errors import UsageError

_KEY_LINE = re.compile(r"^( *)([A-Za-z_][\w.-]*|'[^']*'|\"[^\"]*\")\s*:(\s|$)")
_DASH_LINE = re.compile(r"^( *)- ( *)\S")
REPLACED = ("accept_length", "metrics", "provenance")


def _yaml() -> Any:
    try:
        from ruamel.yaml import YAML
    except ImportError:
        raise UsageError(
            "measure --write needs ruamel.yaml: pip install 'specdec-gate[measure]'"
        ) from None
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16
    return yaml


def measure_indentation(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as the file writes them.

    The mapping indent is the step from a block key to its first nested key; the
    dash offset is the column of ``- `` under ``deployments:`` relative to that
    key, and the sequence indent the column of the item's content relative to it.
    Defaults (2, 4, 2) where the file shows none.
    """
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    mapping = None
    sequence = offset = None
    for number, line in enumerate(lines[:-1]):
        key = _KEY_LINE.match(line)
        if key is None or line.rstrip().split(":", 1)[1].strip().split("#")[0].strip():
            continue
        following = lines[number + 1]
        dash = _DASH_LINE.match(following)
        column = len(key.group(1))
        if dash is not None and sequence is None:
            offset = len(dash.group(1)) - column
            sequence = offset + 2 + len(dash.group(2))
            continue
        nested = _KEY_LINE.match(following)
        if nested is not None and mapping is None and len(nested.group(1)) > column:
            mapping = len(nested.group(1)) - column
    if sequence is None or offset is None:
        sequence, offset = 4, 2
    return mapping or 2, sequence, offset


def write_evidence(claims: Path, deployment: str, block: dict[str, Any]) -> None:
    """Replace ``deployment``'s evidence keys in ``claims`` with ``block``.

    Raises:
        UsageError: not a YAML claims file, no deployment of that name, or the
            round trip would change a line outside that deployment (nothing written).
    """
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    if claims.suffix.lower() == ".json":
        raise UsageError(f"--write {claims}: only YAML claims files are edited in place")
    try:
        raw = claims.read_bytes()
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--write {claims}: cannot read ({exc})") from None
    bom = raw.startswith(b"\xef\xbb\xbf")
    crlf = "\r\n" in text
    text = text.replace("\r\n", "\n")
    yaml = _yaml()
    mapping, sequence, offset = measure_indentation(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    try:
        data = yaml.load(text)
    except YAMLError as exc:
        raise UsageError(f"--write {claims}: not YAML ({str(exc).splitlines()[0]})") from None
    deployments = data.get("deployments") if isinstance(data, dict) else None
    if not isinstance(deployments, list):
        raise UsageError(f"--write {claims}: no deployments list")
    names = [d.get("name") if isinstance(d, dict) else None for d in deployments]
    if deployment not in names:
        raise UsageError(f"--write {claims}: no deployment named {deployment!r}")
    index = names.index(deployment)
    target = deployments[index]
    evidence = target.get("evidence")
    if not isinstance(evidence, dict):
        evidence = CommentedMap()
        target["evidence"] = evidence
    _replace(evidence, block)
    out = io.StringIO()
    yaml.dump(data, out)
    result = out.getvalue()
    start, end = _deployment_lines(deployments, index, text)
    _verify(text, result, start, end, claims)
    if crlf:
        result = result.replace("\n", "\r\n")
    _atomic_write(claims, ("\ufeff" if bom else "") + result)


def _replace(evidence: Any, block: dict[str, Any]) -> None:
    """Set or remove each of :data:`REPLACED` in ``evidence`` as ``block`` says."""
    following = ""
    for key in REPLACED:
        if key in block:
            value = _styled(block[key])
            if key in evidence:
                evidence[key] = value
            else:
                evidence.insert(_slot(evidence, key), key, value)
        elif key in evidence:
            following += _comment_after(evidence, key)
            del evidence[key]
    if following:
        _attach_after_last(evidence, following)


def _comment_after(mapping: Any, key: str) -> str:
    """The comment lines ruamel keeps after ``key`` when it is the mapping's last key
    (the lines that follow the block in the file), without the key's own end-of-line
    comment: they must survive the key's removal."""
    if not mapping or list(mapping)[-1] != key:
        return ""
    entry = mapping.ca.items.get(key)
    token = entry[2] if entry and len(entry) > 2 else None
    value = getattr(token, "value", "") or ""
    return value[value.index("\n") :] if "\n" in value else ""


def _attach_after_last(mapping: Any, text: str) -> None:
    """Give ``text`` (starting with a line break) to the deepest last key of
    ``mapping``, so it prints after the block as it did before."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    owner = mapping
    while owner and isinstance(owner[list(owner)[-1]], CommentedMap):
        owner = owner[list(owner)[-1]]
    if not owner:
        return
    last = list(owner)[-1]
    entry = owner.ca.items.get(last)
    if entry and len(entry) > 2 and entry[2] is not None:
        return  # it has a comment of its own; the line check reports what moved
    owner.ca.items[last] = [None, None, CommentToken(text, CommentMark(0), None), None]


def _slot(evidence: Any, key: str) -> int:
    """Where a new key goes: ``accept_length`` first, ``provenance`` right after
    ``metrics`` when there is one, anything else at the end."""
    keys = list(evidence)
    if key == "accept_length":
        return 0
    if key == "provenance" and "metrics" in keys:
        return keys.index("metrics") + 1
    return len(keys)


def _styled(value: Any) -> Any:
    """Plain data → ruamel nodes: mappings in block style, lists of numbers in flow
    style (``marginal: [0.8, 0.6]``)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        node = CommentedMap()
        for key, item in value.items():
            node[key] = _styled(item)
        return node
    if isinstance(value, list):
        seq = CommentedSeq(_styled(item) for item in value)
        seq.fa.set_flow_style()
        return seq
    return value


def _deployment_lines(deployments: Any, index: int, text: str) -> tuple[int, int]:
    """0-based line range [start, end) of deployment ``index`` in the original: from
    its ``-`` line to its last line of content (blank and comment lines after it
    belong to what follows, and must stay)."""
    lines = text.splitlines()
    start = deployments.lc.item(index)[0]
    limit = deployments.lc.item(index + 1)[0] if index + 1 < len(deployments) else len(lines)
    end = start + 1
    for number in range(start, limit):
        stripped = lines[number].strip()
        if stripped and not stripped.startswith("#"):
            end = number + 1
    return start, end


def _verify(before: str, after: str, start: int, end: int, claims: Path) -> None:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, a0, a1, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        if a0 < start or a1 > end or (a0 == a1 and not start <= a0 <= end):
            raise UsageError(
                f"--write {claims}: the YAML library would reformat line {a0 + 1} outside "
                "the deployment being written; nothing written (edit the evidence by hand, "
                "or normalise the file's indentation)"
            )


def _atomic_write(path: Path, text: str) -> None:
    import os
    import tempfile

    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
