"""SGLang refusals that failed configurations SGLang serves (the false-fail hunt of
issue 27: spec v2's truth words, the FlashInfer-MLA / FlashMLA multi-step draft backends,
``--disable-mla``, ``--json-model-override-args``), each side pinned to the PyPI wheel
read (``pip download --no-deps sglang==X``, nothing installed; ``sglang/srt/…`` lines).
"""

from __future__ import annotations

import pytest
from tests.integration.test_engine_checks import Run, check, found  # noqa: F401
from tests.integration.test_engine_refusals_missing import _sglang
from tests.integration.test_sglang_check_lifetimes import _LLAMA, _MLA, _findings, _said

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


_MTP = "--speculative-algorithm EAGLE --speculative-eagle-topk 4 "


@pytest.mark.parametrize(
    ("version", "flags", "severity"),
    [
        # DraftBackendFactory.create_decode_backend returns None at one step (0.5.23
        # draft_utils.py:86 '<= 1'; 0.5.7 :40 and 0.5.4 :35 '== 1'): no multi-step draft
        # backend, so FlashInferMLAMultiStepDraftBackend.__init__ (0.5.23
        # flashinfer_mla_backend.py:1196) never runs; draft-extend and verify use
        # FlashInferMLAAttnBackend, which checks no topk
        ("0.5.23", "--speculative-num-steps 1 --speculative-num-draft-tokens 4", []),
        ("0.5.7", "--speculative-num-steps 1 --speculative-num-draft-tokens 4", []),
        ("0.5.4", "--speculative-num-steps 1 --speculative-num-draft-tokens 4", []),
        # 0.5.3 eagle_worker.py:195 builds it at any steps (no guard): refused
        ("0.5.3", "--speculative-num-steps 1 --speculative-num-draft-tokens 4", ["fail"]),
        # the draft backend is --speculative-draft-attention-backend first (0.5.23
        # draft_utils.py:55-61, model_runner.py:320; 0.5.7 draft_utils.py:21-33)
        ("0.5.23", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--speculative-draft-attention-backend triton", []),
        ("0.5.7", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--speculative-draft-attention-backend triton", []),
        # then --decode-attention-backend, from 0.5.2rc2 (eagle_worker.py:197-207; 0.5.3
        # :202-211; 0.5.23 attention_backends(), model_override_base.py:147-151)
        ("0.5.23", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--decode-attention-backend triton", []),
        ("0.5.3", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--decode-attention-backend triton", []),
        ("0.5.23", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--attention-backend triton --decode-attention-backend flashinfer", ["fail"]),
        # 0.5.1's draft worker reads --attention-backend only (eagle_worker.py 'if
        # self.server_args.attention_backend == "flashinfer"'), though the flag exists
        # (server_args.py:1398)
        ("0.5.1", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--decode-attention-backend triton", ["fail"]),
        ("0.5.1", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--attention-backend triton --decode-attention-backend flashinfer", []),
        ("0.5.23", "--speculative-num-steps 3 --speculative-num-draft-tokens 8", ["fail"]),
    ],
)
def test_flashinfer_mla_topk_only_where_the_mla_draft_backend_is_built(
    check: Run,  # noqa: F811
    version: str,
    flags: str,
    severity: list[str],
) -> None:
    backend = "" if "--attention-backend" in flags else "--attention-backend flashinfer "
    got = _findings(check, version, f"{_MTP}{backend}{flags}", target=_MLA)
    assert _said(got, "Flashinfer MLA only supports topk=1") == severity, got


@pytest.mark.parametrize(
    ("version", "flags", "severity"),
    [
        # --disable-mla: 0.4.4.post4 model_runner.py:127-130 'use_mla_backend = ... and not
        # server_args.disable_mla', read by eagle_worker.py:152-172 (FlashInferMultiStep-
        # DraftBackend, no topk check); the same at 0.4.5.post1 (:132, flag :981)
        ("0.4.4.post4", "--disable-mla", []),
        ("0.4.5.post1", "--disable-mla", []),
        ("0.4.4.post4", "", ["fail"]),
    ],
)
def test_flashinfer_mla_topk_not_refused_with_mla_disabled(
    check: Run,  # noqa: F811
    version: str,
    flags: str,
    severity: list[str],
) -> None:
    launch = f"{_TREE.replace('EAGLE', 'NEXTN')} --attention-backend flashinfer {flags}"
    got = _findings(check, version, launch, target=_MLA, draft=_MLA)
    assert _said(got, "Flashinfer MLA only supports topk=1") == severity, got


def test_flashinfer_mla_topk_not_refused_for_a_draft_without_mla(
    check: Run,  # noqa: F811
) -> None:
    # 0.5.23 draft_utils.py:227: a draft runner without MLA gets FlashInferMultiStepDraft-
    # Backend, which checks no topk
    launch = f"{_TREE} --attention-backend flashinfer"
    got = _findings(check, "0.5.23", launch, target=_MLA, draft=_LLAMA)
    assert _said(got, "Flashinfer MLA only supports topk=1") == [], got


@pytest.mark.parametrize(
    ("version", "flags", "severity"),
    [
        # FlashMLAMultiStepDraftBackend (0.5.23 flashmla_backend.py:598-610) is built by the
        # same factory: none at one step from 0.5.4, the draft backend flag first
        ("0.5.23", "--speculative-num-steps 1 --speculative-num-draft-tokens 4", []),
        ("0.5.3", "--speculative-num-steps 1 --speculative-num-draft-tokens 4", ["fail"]),
        ("0.5.23", "--speculative-num-steps 3 --speculative-num-draft-tokens 8 "
         "--speculative-draft-attention-backend triton", []),
        ("0.5.23", "--speculative-num-steps 3 --speculative-num-draft-tokens 8", ["fail"]),
    ],
)
def test_flashmla_topk_only_where_its_draft_backend_is_built(
    check: Run,  # noqa: F811
    version: str,
    flags: str,
    severity: list[str],
) -> None:
    got = _findings(check, version, f"{_MTP}--attention-backend flashmla {flags}", target=_MLA)
    assert _said(got, "FlashMLA only supports topk=1") == severity, got


_NO_NEXTN = {k: v for k, v in _MLA.items() if k != "num_nextn_predict_layers"}
_SELF_MTP = "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
_SELF_MTP += "--speculative-num-draft-tokens 4"


@pytest.mark.parametrize(
    ("target", "override", "phrase", "severity"),
    [
        # --json-model-override-args: the draft's (and the target's) ModelConfig gets it
        # (0.5.23 configs/model_config.py:962), json.loads it (:612), and get_config sets
        # its keys with config.update (utils/hf_transformers/config.py:356-357) before
        # deepseek_weight_loader.py:563-567 reads num_nextn_predict_layers
        (_NO_NEXTN, "", "not in the config", ["fail"]),
        (_NO_NEXTN, '{"num_nextn_predict_layers": 1}', "not in the config", []),
        (_NO_NEXTN, '{"num_nextn_predict_layers": 1}', "Only 1 nextn layer", []),
        (_MLA, '{"num_nextn_predict_layers": 2}', "Only 1 nextn layer", ["fail"]),
        ({**_MLA, "num_nextn_predict_layers": 2}, '{"num_nextn_predict_layers": 1}',
         "Only 1 nextn layer", []),
        # not JSON (json.loads raises at startup) or not an object: what the configs hold
        # then is in doubt, so a warning
        (_NO_NEXTN, '{"num_nextn_predict_layers": 1', "not in the config", ["warn"]),
        (_NO_NEXTN, "[1]", "not in the config", ["warn"]),
        # an override of other keys leaves the count as the config states it
        (_NO_NEXTN, '{"rope_theta": 10000}', "not in the config", ["fail"]),
    ],
)
def test_nextn_checks_read_the_model_override(
    check: Run,  # noqa: F811
    target: dict[str, object],
    override: str,
    phrase: str,
    severity: list[str],
) -> None:
    flags = f"{_SELF_MTP} --json-model-override-args '{override}'" if override else _SELF_MTP
    got = _findings(check, "0.5.23", flags, target=target)
    assert _said(got, phrase) == severity, got
