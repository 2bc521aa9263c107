"""SGLang refusals that failed configurations SGLang serves (the false-fail hunt of
issue 27: spec v2's truth words, the FlashInfer-MLA / FlashMLA multi-step draft backends,
``--disable-mla``, ``--json-model-override-args``), each side pinned to the PyPI wheel
read (``pip download --no-deps sglang==X``, nothing installed; ``sglang/srt/…`` lines).
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, found  # noqa: F401
from tests.integration.test_engine_refusals_missing import _sglang

_TREE = "--speculative-algorithm EAGLE --speculative-draft-model-path d "
_TREE += "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8"


@pytest.mark.parametrize(
    ("word", "refused"),
    [
        # environ.py of the 0.5.7 wheel: EnvBool.parse lower-cases the value (no strip) and
        # takes true/1/yes/y as True (:115-117), false/0/no/n as False (:118-119); anything
        # else raises ValueError, and EnvField.get warns 'Invalid value … using default'
        # and returns the default, False (:60-66; SGLANG_ENABLE_SPEC_V2 = EnvBool(False),
        # :362); server_args.py:2000-2013 raises only when get() is True
        ("y", True),
        ("Y", True),
        ("TRUE", True),
        ("Yes", True),
        ("1", True),
        ("on", False),
        ("ON", False),
        ("' 1'", False),  # not stripped: ' 1' is not a word of the list
        ("''", False),  # set but empty: parse('') raises, the default is used
        ("2", False),
        ("no", False),
        ("n", False),
    ],
)
def test_spec_v2_truth_words_are_sglangs(
    check: Run,  # noqa: F811
    word: str,
    refused: bool,
) -> None:
    files = _sglang("0.5.7", _TREE, "LlamaForCausalLM")
    files["cmd.txt"] = f"SGLANG_ENABLE_SPEC_V2={word} " + files["cmd.txt"]
    _code, dep = check(files)
    spec_v2 = [s for s, _, m in found(dep, "SG307") if "supports only eagle_topk 1" in m]
    assert spec_v2 == (["fail"] if refused else []), found(dep, "SG307")


@pytest.mark.parametrize("version", ["0.5.8", "0.5.10.post1"])
def test_spec_v2_y_is_true_at_every_release_of_the_refusal(
    check: Run,  # noqa: F811
    version: str,
) -> None:
    # environ.py of the 0.5.8 (:115-119) and 0.5.10.post1 (:121-125) wheels: the same
    # EnvBool.parse; the branch at server_args.py:2141 (0.5.8) and :3000 (0.5.10.post1),
    # the raise under it
    files = _sglang(version, _TREE, "LlamaForCausalLM")
    files["cmd.txt"] = "SGLANG_ENABLE_SPEC_V2=y " + files["cmd.txt"]
    _code, dep = check(files)
    spec_v2 = [s for s, _, m in found(dep, "SG307") if "supports only eagle_topk 1" in m]
    assert spec_v2 == ["fail"], found(dep, "SG307")
