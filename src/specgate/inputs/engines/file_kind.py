"""Which reader an engine config is read with when its name does not say
(docs/engines.md#finding-the-configuration): an extensionless script by its ``#!`` line
(``bin/serve``, ``docker/entrypoint``), a Dockerfile by its name, a chart template by
its ``{{ }}``. A form specgate does not read is :class:`UnreadForm` (SG312 on the
deployment; the rest of the run is checked), never a YAML syntax error.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

from specgate.core.errors import UnreadForm

Kind = Literal["text", "python", "yaml"]
#: Interpreters whose scripts are read as shell (the bash reader, as a ``.sh`` file).
_SHELLS = frozenset({"sh", "bash", "dash"})
_PYTHON = re.compile(r"python(?:[0-9]+(?:\.[0-9]+)?)?")
#: A Go template action (Helm): ``{{ … }}``, ``{{- … -}}``.
_ACTION = re.compile(r"\{\{-?\s*[^}\n]*\}\}")


def _interpreter(first: str) -> str | None:
    """The program a ``#!`` line runs the script with (``/usr/bin/env [-S] NAME`` gives
    NAME), None when the line names none."""
    words = first[2:].split()
    if not words:
        return None
    program = PurePosixPath(words[0]).name
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return PurePosixPath(rest[0]).name if rest else None
    return program


def is_dockerfile(path: Path) -> bool:
    """``Dockerfile``, ``Containerfile``, ``Dockerfile.gpu``, ``gpu.Dockerfile`` (not
    ``Dockerfile.yaml``: a suffix of a form read)."""
    name = path.name.lower()
    if name.endswith((".yaml", ".yml", ".json", ".txt", ".sh", ".py")):
        return False
    return (
        name in {"dockerfile", "containerfile"}
        or name.startswith(("dockerfile.", "containerfile."))
        or name.endswith((".dockerfile", ".containerfile"))
    )


def unsuffixed_kind(path: Path, text: str, shown: str) -> Kind:
    """The reader of a file whose suffix names none: a Dockerfile is not read; a
    ``#!`` script is shell or Python by its interpreter (another interpreter: not
    read); anything else is YAML.

    Raises:
        UnreadForm: a Dockerfile, or a script of another interpreter, at line 1.
    """
    if is_dockerfile(path):
        raise UnreadForm(
            "a Dockerfile: specgate does not read its ENTRYPOINT and CMD; name the script, "
            "Compose file or manifest that runs the image as engine_config",
            shown, 1,
        )
    if not text.startswith("#!"):
        return "yaml"
    program = _interpreter(text.split("\n", 1)[0])
    if program in _SHELLS:
        return "text"
    if program is not None and _PYTHON.fullmatch(program):
        return "python"
    shown_program = (program or "no interpreter")[:40]
    raise UnreadForm(
        f"a script run by {shown_program!r} (its #! line), which specgate does not read",
        shown, 1,
    )


def template_line(text: str) -> int | None:
    """The line of the first Go template action (``{{ … }}``) of a file; None when it
    holds none. A file is taken as a template when it holds one and is in a chart's
    ``templates`` folder, or does not parse as YAML."""
    found = _ACTION.search(text)
    if found is None:
        return None
    return text.count("\n", 0, found.start()) + 1


def in_chart_templates(path: Path) -> bool:
    """``path`` is in the ``templates`` folder of a Helm chart (a ``Chart.yaml`` above)."""
    return path.parent.name == "templates" and (path.parent.parent / "Chart.yaml").is_file()


def unread_template(shown: str, line: int) -> UnreadForm:
    return UnreadForm(
        "a Go template (a Helm chart template: `{{ }}`), which specgate does not render; "
        "name the chart's values file as engine_config (docs/engines.md#not-read)",
        shown, line,
    )
