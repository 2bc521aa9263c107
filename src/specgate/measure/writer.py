"""``specgate measure --write``: replace one deployment's evidence in a YAML claims
file, keeping everything else as it was (README.md#record-evidence, docs/change-gate.md#baseline).

The edit is a round trip through ruamel.yaml (a core dependency, imported only here),
which keeps comments, key order, quotes and flow style. Only the lines of the
written deployment's ``evidence`` block are taken from the library's output: they
are dumped with the indentation measured in that block (else in that deployment,
else in the file), moved to the block's own column and spliced between the
original lines, so every other line (other blocks of the same deployment with
their own indentation, a missing final newline, an anchor the library would drop)
stays byte-identical. The spliced text must parse to what the library wrote, else
nothing is written. A deployment written in flow style (``- {name: …}``) falls
back to a whole-file check: every line outside that deployment must be unchanged.

Inside the evidence block ``accept_length``, ``metrics`` and ``provenance`` are
replaced (``metrics`` removed when the new evidence has none) and every other
evidence key is kept. What may change inside that block: the style of the values
written (a quoted date, flow-style lists), its indentation (the block's own step),
and the end-of-line comment of a replaced or removed key goes with the old value;
comment lines after the block stay in place. Kept keys that are measurements of
their own (``measured_speedup``, ``throughput``, …) and dropped provenance keys
are reported to the user in one line.
"""

from __future__ import annotations

import difflib
import io
import itertools
import re
from pathlib import Path
from typing import Any

from specgate.core.errors import UsageError

_KEY_LINE = re.compile(r"^( *)([A-Za-z_][\w.-]*|'[^']*'|\"[^\"]*\")\s*:(\s|$)")
_DASH_LINE = re.compile(r"^( *)- ( *)\S")
REPLACED = ("accept_length", "metrics", "provenance")


def _yaml() -> Any:
    try:
        from ruamel.yaml import YAML
    except ImportError:
        raise UsageError(
            "measure --write needs ruamel.yaml, which this installation lacks: reinstall "
            "specdec-gate (it depends on ruamel.yaml), or pip install ruamel.yaml"
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


#: Evidence keys that are measurements of their own: kept by ``--write``
#: (README.md#record-evidence), but not re-measured by the run being written, so the user is told.
MEASURED_ELSEWHERE = ("measured_speedup", "throughput", "verify_cost_ratio", "next")


def write_evidence(claims: Path, deployment: str, block: dict[str, Any]) -> str | None:
    """Replace ``deployment``'s evidence keys in ``claims`` with ``block``.

    Only the lines of that deployment's ``evidence`` block change: the new block is
    dumped by the round-trip library with the indentation measured in that block
    (else in that deployment, else in the file), moved to the block's own column
    and spliced between the original lines, which stay byte-identical (a missing
    final newline, an unused anchor, another block's indentation included). The
    result must parse to what the library itself would have written, else nothing
    is written.

    Returns:
        One line for the user when evidence keys that this run did not measure were
        kept (``measured_speedup`` from another run) or provenance keys dropped,
        else ``None``.

    The file is read and replaced under one exclusive lock
    (:func:`specgate.core.output_file.locked_edit`): of two runs writing one file at
    once, the second is refused (exit 2) rather than silently overwriting the first's
    evidence, and so is a run whose file another program changed meanwhile.

    Raises:
        UsageError: not a YAML claims file, no deployment of that name, evidence
            shared with another part of the file through a YAML anchor or merge key,
            the file changed meanwhile, or the edit cannot be confined to that
            deployment (nothing written).
    """
    from specgate.core.output_file import FileChanged, locked_edit

    if claims.suffix.lower() == ".json":
        raise UsageError(f"--write {claims}: only YAML claims files are edited in place")
    try:
        with locked_edit(str(claims)) as (raw, replace):
            result, note = _edited(claims, raw, deployment, block)
            replace(result, "")
    except FileChanged as exc:
        raise UsageError(f"--write {claims}: {exc}; nothing written (run it again)") from None
    except OSError as exc:
        raise UsageError(f"--write {claims}: cannot write ({exc.strerror or exc})") from None
    return note


def _edited(
    claims: Path, raw: bytes, deployment: str, block: dict[str, Any]
) -> tuple[str, str | None]:
    """The new text of ``claims`` (read as ``raw``) and the note for the user."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    text, bom, crlf = _decode(claims, raw)
    yaml = _yaml()
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
    from specgate.core.names import name_key

    key = name_key(deployment)
    alike = sum(1 for n in names if isinstance(n, str) and name_key(n) == key)
    if alike > 1:  # the one meant is not known: writing the first could be the wrong one
        raise UsageError(
            f"--write {claims}: {alike} deployments are named {deployment!r} (or a spelling "
            "of it that differs only in case, spacing or invisible characters); nothing "
            "written (give each deployment a unique name: SG003)"
        )
    index = names.index(deployment)
    target = deployments[index]
    shared = _shared(target, text)
    if shared is not None:
        raise UsageError(
            f"--write {claims}: the evidence of {deployment!r} is shared through {shared}: "
            "writing it would change another deployment too; nothing written (give "
            f"{deployment!r} an evidence block of its own)"
        )
    start, end = _deployment_lines(deployments, index, text)
    old = _old_block(target, text, start, end)
    mapping, sequence, offset = measure_indentation(text)
    lines = text.splitlines()
    mapping = (
        _mapping_step(lines[old.first : old.end])
        or _mapping_step(lines[start:end])
        or mapping
    )
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    evidence = target.get("evidence")
    if not isinstance(evidence, dict):
        evidence = CommentedMap()
        target["evidence"] = evidence
    note = _kept_and_dropped(evidence, block)
    if old.column is not None:
        _strip_trailing_comment_lines(evidence)  # the splice keeps the original's
    _replace(evidence, block)
    out = io.StringIO()
    yaml.dump(data, out)
    dumped = out.getvalue()
    if old.column is None:  # a flow-style deployment: the whole-file check decides
        _verify(text, dumped, start, end, claims)
        result = dumped
    else:
        result = _splice(text, dumped, index, old, claims)
    if crlf:
        result = result.replace("\n", "\r\n")
    return ("\ufeff" if bom else "") + result, note


def _decode(claims: Path, raw: bytes) -> tuple[str, bool, bool]:
    """The claims file's text with LF line ends, whether it had a BOM, whether CRLF."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--write {claims}: cannot read ({exc})") from None
    crlf = "\r\n" in text
    return text.replace("\r\n", "\n"), raw.startswith(b"\xef\xbb\xbf"), crlf


def _shared(target: Any, text: str) -> str | None:
    """How the deployment ``target``'s evidence is shared with another part of the
    file (``"anchor &ev"``, ``"a merge key (<<)"``), else ``None``: an anchor on the
    deployment, its evidence or anything inside it that an alias uses (the alias's
    node is the same object), or a merge key inside the evidence."""
    evidence = target.get("evidence")
    nodes: list[Any] = [target]
    stack: list[Any] = [evidence]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias met twice (or a node that holds itself)
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            nodes.append(node)
            if getattr(node, "merge", None):
                return "a merge key (<<)"
            stack.extend(node.values())
        elif isinstance(node, list):
            nodes.append(node)
            stack.extend(node)
    for node in nodes:
        anchor = getattr(getattr(node, "anchor", None), "value", None)
        if anchor and re.search(r"\*" + re.escape(anchor) + r"(?![^\s,\]}])", text):
            return f"the YAML anchor &{anchor}"
    return None


class _Block:
    """Where the deployment's evidence block is in the original: lines [first, end)
    (first == end: absent, to be inserted there) and the column of ``evidence:``
    (``None`` when the deployment is not in block style)."""

    def __init__(self, first: int, end: int, column: int | None) -> None:
        self.first, self.end, self.column = first, end, column


def _old_block(target: Any, text: str, start: int, end: int) -> _Block:
    lines = text.splitlines()
    keys = list(target)
    if not keys:
        return _Block(end, end, None)
    if "evidence" in keys:
        line, column = target.lc.key("evidence")
    else:
        line, column = target.lc.key(keys[0])
        line = end
    head = lines[target.lc.key(keys[0])[0]][: target.lc.key(keys[0])[1]]
    if head.strip() not in ("", "-") or column is None:
        return _Block(end, end, None)
    if "evidence" not in keys:
        return _Block(end, end, column)
    return _Block(line, _block_end(lines, line, column, end), column)


def _block_end(lines: list[str], first: int, column: int, limit: int) -> int:
    """The line after the last content line of the block whose key is at ``column``
    on line ``first`` (content: neither blank nor a comment, indented deeper)."""
    last = first + 1
    for number in range(first + 1, min(limit, len(lines))):
        stripped = lines[number].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(lines[number]) - len(lines[number].lstrip(" ")) <= column:
            break
        last = number + 1
    return last


def _mapping_step(lines: list[str]) -> int | None:
    """The step from a block key to its first nested key in ``lines``, if any."""
    content = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    for here, following in itertools.pairwise(content):
        key, nested = _KEY_LINE.match(here), _KEY_LINE.match(following)
        if key is None or nested is None:
            continue
        if here.rstrip().split(":", 1)[1].strip().split("#")[0].strip():
            continue
        step = len(nested.group(1)) - len(key.group(1))
        if step > 0:
            return step
    return None


def _splice(text: str, dumped: str, index: int, old: _Block, claims: Path) -> str:
    """The original lines with the evidence block taken from ``dumped``, moved to
    the original block's column; checked to parse as ``dumped`` does."""
    yaml = _yaml()
    fresh = yaml.load(dumped)["deployments"][index]
    line, column = fresh.lc.key("evidence")
    new_lines = dumped.splitlines()
    new_end = _block_end(new_lines, line, column, len(new_lines))
    assert old.column is not None
    shift = old.column - column
    block = [_shifted(ln, shift) + "\n" for ln in new_lines[line:new_end]]
    original = text.splitlines(keepends=True)
    if 0 < old.first <= len(original) and not original[old.first - 1].endswith("\n"):
        original[old.first - 1] += "\n"  # inserting after a last line without newline
    result = "".join(original[: old.first] + block + original[old.end :])
    if not text.endswith("\n") and result.endswith("\n"):
        result = result[:-1]  # the file had no final newline: nor has it now
    if _plain(result) != _plain(dumped):
        raise UsageError(
            f"--write {claims}: cannot confine the edit to the evidence of deployment "
            f"{index + 1} (line {old.first + 1}); nothing written (edit it by hand)"
        )
    return result


def _shifted(line: str, shift: int) -> str:
    if shift >= 0 or not line.strip():
        return " " * shift + line if line.strip() else ""
    lead = len(line) - len(line.lstrip(" "))
    return line[min(-shift, lead) :]


def _plain(text: str) -> Any:
    import yaml as pyyaml

    try:
        return pyyaml.safe_load(text)
    except pyyaml.YAMLError:
        return object()  # equal to nothing: the splice is refused


def _kept_and_dropped(evidence: Any, block: dict[str, Any]) -> str | None:
    """The line telling the user which kept evidence keys this run did not measure
    and which provenance keys it drops."""
    kept = [key for key in MEASURED_ELSEWHERE if key in evidence]
    provenance = evidence.get("provenance")
    dropped = [
        f"provenance.{key}"
        for key in (provenance if isinstance(provenance, dict) else {})
        if key not in block.get("provenance", {})
    ]
    parts = []
    if kept:
        parts.append(
            "kept "
            + ", ".join(f"evidence.{key}" for key in kept)
            + " from an earlier run: not re-measured by this one (update or remove it)"
        )
    if dropped:
        parts.append("dropped " + ", ".join(dropped) + " (not known to this run)")
    return "; ".join(parts) or None


def _replace(evidence: Any, block: dict[str, Any]) -> None:
    """Set or remove each of :data:`REPLACED` in ``evidence`` as ``block`` says."""
    following = ""
    for key in REPLACED:
        if key in block:
            value = _styled(block[key])
            if key in evidence:
                _drop_end_of_line_comment(evidence, key)
                evidence[key] = value
            else:
                evidence.insert(_slot(evidence, key), key, value)
        elif key in evidence:
            following += _comment_after(evidence, key)
            del evidence[key]
    if following:
        _attach_after_last(evidence, following)


def _strip_trailing_comment_lines(mapping: Any) -> None:
    """Remove the comment lines that follow the block (the library keeps them with
    the deepest last key): the splice keeps them from the original, so the new block
    must not carry them too. The last key's own end-of-line comment stays."""
    from ruamel.yaml.comments import CommentedMap

    owner = mapping
    while owner and isinstance(owner[list(owner)[-1]], CommentedMap) and owner[list(owner)[-1]]:
        owner = owner[list(owner)[-1]]
    if not isinstance(owner, CommentedMap) or not owner:
        return
    entry = owner.ca.items.get(list(owner)[-1])
    token = entry[2] if entry and len(entry) > 2 else None
    value = getattr(token, "value", "") or ""
    if token is None or "\n" not in value:
        return
    own = value[: value.index("\n") + 1]
    if own.strip():
        token.value = own
    else:
        entry[2] = None


def _drop_end_of_line_comment(mapping: Any, key: str) -> None:
    """Remove the comment at the end of ``key``'s line (it spoke of the value being
    replaced: "# measured by hand last month"); comment lines after it stay."""
    entry = mapping.ca.items.get(key)
    token = entry[2] if entry and len(entry) > 2 else None
    value = getattr(token, "value", "") or ""
    if token is None or not value.lstrip(" ").startswith("#"):
        return
    rest = value[value.index("\n") :] if "\n" in value else ""
    if rest.strip():
        token.value = rest
    else:
        entry[2] = None


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
