"""The chat template a deployment serves, as a digest (docs/change-gate.md#provenance-rules, SG411).

``evidence.provenance.chat_template`` and ``workload.chat_template`` name a template
by ``sha256:`` + the first 16 hex digits of SHA-256 over its text (UTF-8, line endings
as LF, so a checkout's CRLF conversion does not change it), the shape of the config
digest. The text is a ``.jinja`` file's, or the ``chat_template`` string of a
``tokenizer_config.json`` (transformers' ``PreTrainedTokenizerBase.chat_template``;
when it holds a list of named templates, the one named ``default``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from specgate.core.errors import InputError
from specgate.load.read import read_text


def template_digest(text: str) -> str:
    """``sha256:`` + 16 hex digits of ``text`` (CRLF and CR read as LF).

    Example: ``template_digest("{{ m }}\\n")`` is ``sha256:`` + the first 16 hex digits
    of SHA-256 over the 8 bytes ``{{ m }}\\n``.
    """
    normal = text.replace("\r\n", "\n").replace("\r", "\n")
    return "sha256:" + hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def read_template(path: Path, shown: str) -> str:
    """The template text of ``path``: a ``tokenizer_config.json`` (or any JSON object with
    ``chat_template``) gives that string, any other file its whole text.

    Raises:
        InputError: unreadable, over 1 MiB, not UTF-8; a JSON object without a
            ``chat_template`` string (or a list without one named ``default``).
    """
    text = read_text(path, shown)
    if not path.name.endswith(".json"):
        return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise InputError("not JSON (give the template's own .jinja file instead)", shown) from None
    template = data.get("chat_template") if isinstance(data, dict) else None
    if isinstance(template, list):
        template = next(
            (
                t.get("template")
                for t in template
                if isinstance(t, dict) and t.get("name") == "default"
            ),
            None,
        )
        # transformers 5.19.0 tokenization_utils_base.py get_chat_template: of named
        # templates, "default" applies without tools; none named so is its ValueError
        if not isinstance(template, str):
            raise InputError(
                "chat_template lists named templates, none a string named 'default' "
                "(the one transformers applies): give the template's own .jinja file",
                shown,
            )
    if not isinstance(template, str):
        # the same file's loader reads a chat_template.jinja beside the config first
        raise InputError(
            "holds no chat_template string (the model's template may be in its own "
            "chat_template.jinja beside it): give the template's .jinja file",
            shown,
        )
    return template
