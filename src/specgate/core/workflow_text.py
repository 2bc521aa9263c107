"""The one rule that keeps repository text from becoming a legacy workflow command.

The GitHub runner reads every log line twice (actions/runner
``src/Runner.Worker/ActionCommandManager.cs``, ``TryProcessCommand``): first as a
``::command::`` (``ActionCommand.TryParseV2``, only at the start of the line after
leading white space), then, when that fails, as a legacy ``##[command]data``
(``ActionCommand.TryParse``: ``message.IndexOf("##[")``, so *anywhere* in the line;
read at actions/runner 079cdb1, ``src/Runner.Common/ActionCommand.cs``). A
``##[stop-commands]TOKEN`` in the middle of a line printed from a deployment name or
a file path would stop the runner from processing every later workflow command of the
job (its annotations, ``::add-mask::``).

:func:`defuse` is the only place that rule is applied: every channel — standard error,
the text format, annotations, the job summary, JSON, SARIF and the YAML that
``measure`` prints — passes untrusted text through it, each with the escape its syntax
reads back as ``[`` (a backslash for text and Markdown, ``\\u005b`` inside JSON
strings, ``\\x5b`` inside YAML double-quoted scalars).
"""

from __future__ import annotations

#: What the runner's legacy parser looks for anywhere in a line.
LEGACY_PREFIX = "##["


def defuse(text: str, bracket: str = "\\[") -> str:
    """``text`` with every ``##[`` written as ``##`` + ``bracket``.

    ``##[`` cannot overlap itself, so one left-to-right replacement leaves none: each
    ``[`` that followed ``##`` is now preceded by ``bracket``'s first character.

    >>> defuse("x ##[stop-commands]tok")
    'x ##\\\\[stop-commands]tok'
    >>> defuse('"##[error]"', "\\\\u005b")
    '"##\\\\u005berror]"'
    """
    if LEGACY_PREFIX not in text:
        return text
    return text.replace(LEGACY_PREFIX, "##" + bracket)
