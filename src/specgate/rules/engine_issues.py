"""Rules on what the engine itself does with the serving config (docs/engines.md#versions):
lossy acceptance (SG304), refusals and rewrites (SG307), settings the version lacks
(SG310) and forced acceptance (SG311). Each finding is an engine issue a reader or the
engine's checks (data/engines/*.json) found, at the setting's line; its severity is the
issue's (a behaviour not confirmed at the version in force warns; a rewrite fails when
a claim or the evidence rests on the config as written)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import cast

from specgate.core.concise import join_details
from specgate.core.findings import Severity
from specgate.load.document import Span
from specgate.rules.registry import Hit, RuleContext, rule


def model_unread_hit(ctx: RuleContext, origin: str, action: str, details: str) -> Hit | None:
    """The finding on a model config not read for ``origin`` (``Inputs.model_unread``:
    ``"form"`` SG312, ``"bound"`` SG315), at the model config's line, with ``action``
    and ``details`` (the docs anchor); ``None`` when the deployment has none."""
    inputs = ctx.deployment.inputs
    model = inputs.model_unread if inputs is not None else None
    if model is None or model.origin != origin:
        return None
    block, _, key = model.source.partition(".")
    return Hit(
        f"{model.reason}, so {model.file} is not read; the deployment is judged on "
        "the model values the claims file states",
        ctx.deployment.path(block, key),
        action,
        where=(model.file, None if model.line is None else Span(model.line, model.column or 1)),
        subject=key,
        details=details,
    )


def rests_on_speculation(ctx: RuleContext) -> bool:
    """Whether a claim or the evidence rests on the config as written: a claimed
    speedup, or a stated or measured AL or speedup (a rewrite fails then: README,
    "Reading the files you already commit")."""
    dep = ctx.deployment
    evidence = dep.evidence
    return (
        dep.claimed_speedup is not None
        or evidence.accept_length is not None
        or evidence.measured_speedup is not None
        or (dep.inputs is not None and dep.inputs.acceptance is not None)
    )


def _severity(ctx: RuleContext, severity: str | None) -> Severity | None:
    """An engine issue's severity as a finding's: ``if-claimed`` decided here."""
    if severity == "if-claimed":
        return "fail" if rests_on_speculation(ctx) else "warn"
    if severity in ("fail", "warn", "info"):
        return cast(Severity, severity)
    return None


# The patterns below are compiled on first use (``re``'s cache): only a deployment whose
# engine config raised an issue reads them.
#: A parenthetical that says how the version was judged: "(version unknown: …)".
_VERSION_REASONING = r" \((version unknown\b[^()]*)\)"
#: A closing parenthetical that cites an engine source at its version:
#: " (vllm-project/vllm:vllm/config/speculative.py@v0.32.0)", with what follows it inside.
_CITATION = r"[\w.-]+/[\w.-]+:[^\s()]+@"
_SOURCE = r" \(([^()]*\b[\w.-]+/[\w.-]+:[^\s()]+@[^\s();]+[^()]*)\)$"


def evidence_apart(message: str, details: str) -> tuple[str, str]:
    """An engine issue's message without its version reasoning and cited source, which
    open its details (issue 26: "the evidence belongs beside the message, not in it").

    ``"SGLang 0.5.23 (version unknown: the newest specgate knows) refuses to start: X"``
    → ``("SGLang 0.5.23 refuses to start: X", "at 0.5.23, version unknown: the newest
    specgate knows; …")``; ``"vLLM 0.32.0 refuses to start: X (org/repo:path@v0.32.0)"``
    → ``("vLLM 0.32.0 refuses to start: X", "source org/repo:path@v0.32.0; …")``. A
    fragment the details already hold is not repeated.
    """
    moved: list[str] = []
    found = re.search(_SOURCE, message)
    if found is not None:
        message = message[: found.start()]
        cited = found.group(1)
        moved.append(f"source {cited}" if re.match(_CITATION, cited) else cited)
    found = re.search(_VERSION_REASONING, message)
    if found is not None:
        before = message[: found.start()].split()
        at = f"at {before[-1]}, " if before else ""
        message = message[: found.start()] + message[found.end() :]
        moved.append(at + found.group(1))
    kept = [part for part in moved if part.split(", ", 1)[-1] not in details]
    return message, join_details(*kept, details)


def _engine_issue_hits(
    ctx: RuleContext, code: str, action: str, tail: str = ""
) -> Iterator[Hit]:
    """One hit per engine issue of ``code``; its action is the issue's own (naming the
    setting and what replaces it) when it has one, else ``action`` closed by ``tail``
    (a clause)."""
    inputs = ctx.deployment.inputs
    if inputs is None or inputs.engine is None:
        return
    engine = inputs.engine
    for issue in inputs.engine_issues:
        if issue.code == code:
            span = engine.spans.get(issue.field)
            where = issue.where or ((engine.path, span) if span is not None else None)
            message, details = evidence_apart(issue.message, issue.details)
            yield Hit(
                message,
                ctx.deployment.path("speculation", "engine_config"),
                issue.action or (f"{action.removesuffix('.')}, {tail}" if tail else action),
                where=where,
                severity=_severity(ctx, issue.severity),
                subject=issue.field,
                details=join_details(details, f"{engine.engine} config {engine.path}"),
            )


@rule(
    "SG304",
    "lossy-acceptance",
    "warn",
    "The engine config makes acceptance lossy or synthetic, so AL is not comparable "
    "with a lossless claim.",
    fail_example="""
        version: 1
        deployments:
          - name: r1-mtp
            speculation:
              enabled: false
              engine_config: serving/trtllm.yaml
        # === serving/trtllm.yaml ===
        speculative_config:
          decoding_type: MTP
          max_draft_len: 3
          use_relaxed_acceptance_for_thinking: true
          relaxed_topk: 10
          relaxed_delta: 0.6
    """,
    pass_example="""
        version: 1
        deployments:
          - name: r1-mtp
            speculation:
              enabled: false
              engine_config: serving/trtllm.yaml
        # === serving/trtllm.yaml ===
        speculative_config:
          decoding_type: MTP
          max_draft_len: 3
    """,
)
def lossy_acceptance(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The engine config does not make acceptance lossy or
    synthetic: vLLM `rejection_sample_method: synthetic` or the V0 typical
    acceptance sampler, SGLang `speculative_accept_threshold_*` below 1,
    TensorRT-LLM `use_relaxed_acceptance_for_thinking`, llama.cpp
    `--spec-synth-*`.

    **Why.** Speculative decoding is lossless only with exact rejection
    sampling. Relaxed or synthetic acceptance raises AL by accepting tokens the
    target would not have produced, so such an AL (and its speedup) cannot back
    a lossless claim.
    """
    yield from _engine_issue_hits(
        ctx,
        "SG304",
        "Measure AL with lossless acceptance, or state that the deployment trades "
        "exactness for speed.",
    )


@rule(
    "SG307",
    "engine-config-invalid",
    "fail",
    "The engine itself would refuse or silently rewrite the speculative config.",
    fail_example="""
        version: 1
        deployments:
          - name: llama-eagle
            speculation:
              enabled: false
              engine_config: serving/sglang.yaml
        # === serving/sglang.yaml ===
        speculative_algorithm: EAGLE
        speculative_eagle_topk: 1
        speculative_num_draft_tokens: 4
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama-eagle
            speculation:
              enabled: false
              engine_config: serving/sglang.yaml
        # === serving/sglang.yaml ===
        speculative_algorithm: EAGLE
        speculative_num_steps: 3
        speculative_eagle_topk: 1
        speculative_num_draft_tokens: 4
    """,
)
def engine_config_invalid(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The speculative configuration passes the engine's own
    validation: SGLang tree sizes (topk = 1 forces draft tokens = steps + 1;
    steps, topk and draft tokens set together; tree size within the candidate
    pool), TensorRT-LLM tree bounds (max_draft_len ≤ max_total_draft_tokens ≤
    topK·max_draft_len), draft tensor parallelism 1 or the target's, vLLM MTP
    steps a multiple of the model's MTP layers, n-gram lookup min ≤ max, a
    draft `model` for the vLLM methods that need one (eagle, eagle3, medusa,
    mlp_speculator, draft_model, dflash, custom_class; MTP, DSpark, n-gram and
    suffix run without), a tensor-parallel size that divides the target's
    attention heads (with `model.hf_config`; attention data parallelism aside),
    a vLLM block with a method or a model (vLLM refuses `num_speculative_tokens`
    alone), EAGLE draft tensor parallelism (vLLM runs EAGLE drafters at the
    target's TP and ignores another `draft_tensor_parallel_size`), a llama.cpp
    draft model named with `--spec-type` on builds where it defaults to `none`
    (`llama-server`; `llama-speculative` always drafts with its draft model), vLLM
    `draft_model` at 0.10.0–0.14.0 (refused as a method, and a draft model given
    with no method has no V1 proposer until 0.15.0), vLLM MTP on a model with no
    MTP layer (one finding, naming the method as written: `deepseek_mtp`), and
    SGLang DFLASH block size equal to its draft tokens, a vLLM `method` among
    the exact, case-sensitive names vLLM accepts and no `speculative_config` key
    vLLM's SpeculativeConfig lacks (it forbids extra keys; both with the closest
    accepted name). Version-aware: a
    rewrite or refusal that later releases dropped (SGLang spec v2 with
    topk > 1 now falls back with a warning) follows the engine version
    (`speculation.engine_version`, an image tag or a pinned requirement, else
    the newest release specgate knows). An engine check fails only at a version
    its source was read at (`seen_in` in the engine data; none recorded: the
    newest version specgate knows): pinned before those versions, or with the
    version unknown and the settings used not bounding it to them, it warns,
    saying where it was read and asking to pin `speculation.engine_version`.
    A check of what the engine raises
    after rewriting a setting is judged on the value it runs, in its order
    (SGLang's HiSparse 2-4 draft tokens and topk-1 backends after the topk-1
    draft-token rewrite, the architecture's steps/topk/draft tokens when none
    is given, DFLASH's forced topk 1). SGLang MTP without a draft path is read
    as SGLang decides it, by the target's architecture: a DeepSeek-V3/GLM-4.5
    target whose `num_nextn_predict_layers` is not 1 (or missing) fails (its
    NextN weight loader asserts exactly 1); a target SGLang builds no MTP draft
    for (Llama, or an architecture specgate does not know) warns: its draft
    worker loads the target's own checkpoint whole as the draft, and one it
    builds an MTP class for whose config has no MTP layers warns (its loader
    skips the missing weights).

    What the engines themselves answered is replayed in the tests
    (tests/data/engine_oracle: vLLM 0.27.1 and 0.32.0, SGLang 0.5.23): every key of
    vLLM's `speculative_config` with its type, bounds and enum values at the version
    in force (a key or method the version does not have is SG310 / SG307), D required
    unless the draft's config gives `n_predict`, the method vLLM reads from the
    draft's path (`eagle-`, `eagle3`, `dflash`, `dspark`) or config (`model_type`),
    synthetic acceptance and heterogeneous-vocabulary rules, the batch-size schedule,
    a `draft_model` draft TP other than the target's (refused at engine start), the
    model types and architectures vLLM turns into an MTP draft and the key it counts
    their MTP layers from (its `hf_config_override` run at both versions: a model
    type specgate does not know only warns that the data may be behind); SGLang
    algorithm names, DFLASH/DSpark without a draft, steps/topk/draft tokens partly
    set. Messages read "the engine refuses to start: <its reason>"; the source read,
    the version judged at and why a fail is lowered are the finding's details.
    A value not of its setting's type (`-tp four`, `--speculative-config '{bad'`) is
    this finding at its line, the deployment judged on the claims file's stated values:
    a fail where the engine's own refusal is known at the version in force (vLLM's
    parser, asked at 0.32.0), else a warn (docs/engines.md#refused-values).
    TensorRT-LLM's greedy drafts at a sampled temperature warn unless the AL was
    measured as served (`evidence.provenance.temperature` the served one, and no
    other `dataset` than the workload's): such an AL holds the greedy drafts already.
    A **rewrite** (SGLang's topk-1 draft tokens, vLLM running an EAGLE draft
    at the target's TP) is a **warn** (no claim rests on it), and the served value is
    what every rule judges; a refusal not recorded at the version in force warns.

    **Why.** An engine that refuses the config fails at start-up; one that
    rewrites it silently serves another D than the one reviewed and measured.
    """
    yield from _engine_issue_hits(
        ctx,
        "SG307",
        "Change the serving config as the message says, so that the engine runs it as written.",
    )
    inputs = ctx.deployment.inputs
    unread = inputs.engine_unread if inputs is not None else None
    if unread is not None and unread.origin == "refused":
        span = Span(unread.line, unread.column or 1) if unread.line is not None else None
        yield Hit(
            f"{unread.reason}; this deployment is judged on the claims file's stated values",
            ctx.deployment.path("speculation", "engine_config"),
            f"Give {unread.what} a value of its type, as the engine reads it.",
            where=(unread.file, span),
            severity=_severity(ctx, unread.severity),
            subject=unread.what,
            details=join_details(unread.source, "docs/engines.md#refused-values"),
        )


@rule(
    "SG310",
    "engine-setting-removed",
    "fail",
    "The config uses a flag or key that the engine version removed, deprecates or never had "
    "in that form.",
    fail_example="""
        version: 1
        deployments:
          - name: llama-draft
            speculation:
              enabled: false
              engine: llamacpp
              engine_version: b11312
              engine_config: serving/cmd.txt
        # === serving/cmd.txt ===
        llama-server -m /models/llama-70b.gguf -md /models/llama-1b.gguf --draft-max 8
    """,
    pass_example="""
        version: 1
        deployments:
          - name: llama-draft
            speculation:
              enabled: false
              engine: llamacpp
              engine_config: serving/cmd.txt
        # === serving/cmd.txt ===
        llama-server -m /models/llama-70b.gguf -md /models/llama-1b.gguf --spec-draft-n-max 8
    """,
)
def engine_setting_removed(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** Every flag and key of the engine config exists, in that
    spelling, in the engine version the deployment runs: llama.cpp
    `--draft-max`/`--draft-min`, `--spec-ngram-size-n` on builds from b9071 and `-cd`
    from b9113 (after the `--spec-*` rename, b8992), and any `--spec-*`/`--draft*`
    spelling no build has (`--draft-n-max`: llama-server exits "invalid argument"; the
    finding names the nearest flag); vLLM's V0 flat flags (`--speculative-model`,
    `--num-speculative-tokens`, …) on vLLM ≥ 0.8.3, and with an EAGLE-3 head on any
    release (EAGLE-3 exists only in the V1 engine); a TensorRT-LLM `decoding_type`
    not spelled as the engine's exact discriminator (`Draft_Target`, not
    `DraftTarget`). What the setting meant is still read, so the other rules judge
    the intended configuration.

    vLLM and SGLang read flags with argparse's `allow_abbrev`, as their parsers
    answered when run (vLLM 0.27.1 and 0.32.0, SGLang 0.5.23:
    `specgate/data/engines/parsers/`, recorded by `scripts/record_engine_parsers.py`):
    a unique prefix of one of the engine's flags is that flag
    (`--speculative-num-step 3` sets the steps; vLLM also reads `--spec_me` as
    `--spec-method`), while a speculative spelling the parser refuses is SG310 at the
    word with the engine's own message: an abbreviation of several flags
    (SGLang: "ambiguous option: --speculative-draft could match
    --speculative-draft-model-path, --speculative-draft-model, …") or of none
    (SGLang `--speculative_num_steps`: "unrecognized arguments"); so is any other
    engine word the parser finds ambiguous (vLLM `--max-`). A refused word is read as
    none of the flags it could match. It fails at a version whose parser was
    recorded and warns at any other (the parser may differ there).

    **Which version** (README, "Reading the files you already commit"):
    `speculation.engine_version`, else an image tag
    in the config or a pinned requirement beside it — then a setting that version
    lacks **fails**, and one whose presence there is not confirmed (the release that
    removed it lies between two read) warns. With no version stated or detected the
    settings themselves narrow it: the versions in which every setting used exists
    form the implied range (reported as `inputs.engine.implied_versions`), its newest
    confirmed version is what defaults and the engine's checks are read at, and a
    removed setting **warns**, naming the range and asking to pin
    `speculation.engine_version` — unless no version has every setting used, which
    fails.

    **Why.** Engines rename and remove settings every few weeks. A removed flag
    makes the server refuse to start, or (worse) is ignored and the engine runs
    its default instead of the reviewed draft length.
    """
    engine = ctx.deployment.inputs.engine if ctx.deployment.inputs else None
    pinned = engine is not None and engine.version_source == "claims"
    yield from _engine_issue_hits(
        ctx,
        "SG310",
        "Write the setting as the engine at the version run spells it.",
        "" if pinned else "or state speculation.engine_version if the deployment runs an "
        "older engine release.",
    )


@rule(
    "SG311",
    "forced-acceptance",
    "fail",
    "The engine config forces acceptance, so an AL measured under it is synthetic.",
    fail_example="""
        version: 1
        deployments:
          - name: r1-mtp
            speculation:
              enabled: false
              engine_config: serving/trtllm.yaml
        # === serving/trtllm.yaml ===
        env:
          TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: "3"
        speculative_config:
          decoding_type: MTP
          max_draft_len: 3
    """,
    pass_example="""
        version: 1
        deployments:
          - name: r1-mtp
            speculation:
              enabled: false
              engine_config: serving/trtllm.yaml
        # === serving/trtllm.yaml ===
        speculative_config:
          decoding_type: MTP
          max_draft_len: 3
    """,
)
def forced_acceptance(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The engine config does not force how many drafts are
    accepted: TensorRT-LLM's `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`
    (`tensorrt_llm/_torch/speculative/interface.py`) or SGLang's
    `SGLANG_SIMULATE_ACC_LEN` in the environment of the launch (an
    `env`/`env_vars`/`environment` block beside the configuration, Kubernetes
    `{name, value}` entries, or `NAME=value` before the command), set to a
    positive number (0, SGLang's default -1 and text that is not a number leave
    acceptance alone).

    **Why.** Forced acceptance is a benchmarking switch: the engine accepts a
    fixed number of drafts whatever the target says, so throughput and AL
    measured under it describe no real workload and cannot back a claim.
    """
    yield from _engine_issue_hits(
        ctx,
        "SG311",
        "Remove the forcing variable and measure AL with real acceptance.",
    )


@rule(
    "SG312",
    "engine-config-unread",
    "warn",
    "The serving config was parsed, but specgate could not read a speculative "
    "configuration from it.",
    fail_example="""
        version: 1
        deployments:
          - name: tgi-medusa
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: medusa
              draft_length: 3
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        ollama serve
    """,
    pass_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/vllm.yaml
            evidence:
              accept_length: 2.1
        # === serving/vllm.yaml ===
        speculative_config:
          method: ngram
          num_speculative_tokens: 3
          prompt_lookup_max: 4
    """,
)
def engine_config_unread(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** The serving config named by `speculation.engine_config` was
    read: specgate found the speculative configuration an engine it reads would run.
    When the file parses but holds a form or an engine specgate does not read (a
    launcher of an engine outside its list, a command whose program is not an
    engine's, no speculative setting found, several configurations without a
    `pointer:`), this finding says why, at the file and
    line the reader names, and the deployment is judged on what the claims file
    states (`speculation.mechanism`, `speculation.draft_length`, the evidence);
    every other deployment and file is still checked. A file that cannot be parsed
    at all stays an input error of the run (exit 2). A value the launcher cannot
    settle is SG313 or SG314, by where it is set. A team that accepts the gap puts
    `# specgate: ignore[SG312] -- reason` on the line the finding points at in the
    serving file (docs/engines.md#unsettled-values). One case fails: a container
    command whose first word is a flag on an image with no ENTRYPOINT that starts
    the server (Kubernetes `args` without `command`, Compose `command` without
    `entrypoint`, `docker run IMAGE --flag`): the container runs that flag as its
    program and never starts, known from the image's Dockerfile when its tag pins
    the version (a warning for `latest`, a digest or a variable tag:
    docs/engines.md#not-read). So does a Kubernetes `configMapKeyRef`, not
    `optional: true`, to a key the manifest's ConfigMap lacks: the kubelet does not
    start the container (docs/engines.md#environment-files). A model config
    (`model.hf_config`, `speculation.draft_hf_config`) that parses but holds no
    model specgate reads (not a mapping, no attention head count, a count that is
    not a positive integer) is this finding at that file: the model config is not
    read, and the deployment is judged on the model values the claims file states
    (`model.query_heads_per_kv`, …); checks that need a value stated nowhere are
    skipped (docs/engines.md#model-config-not-read).

    **Why.** One unread form used to stop the whole run (exit 2, status `error`),
    so a regression elsewhere in the same change went through. A finding keeps the
    gap visible without blocking what can be judged; it warns, since nothing about
    the engine was read to fail on. A container Kubernetes does not start fails:
    a `configMapKeyRef` to a key the manifest's own ConfigMap lacks (the kubelet's
    "couldn't find key"). A command on an image with no server ENTRYPOINT warns: the
    image's Dockerfile was read at one commit, so it is an assumption for any tag.
    A model config without a head count is no
    refusal either: transformers fills it from the model class's default
    (`LlamaConfig`'s `num_attention_heads: int = 32`, transformers 5.19.0), a value
    specgate does not assume.
    """
    inputs = ctx.deployment.inputs
    model = model_unread_hit(
        ctx,
        "form",
        "Give the model config its attention head counts as positive integers, or "
        "state the model's values in the claims file.",
        "docs/engines.md#model-config-not-read",
    )
    if model is not None:
        yield model
    unread = inputs.engine_unread if inputs is not None else None
    if unread is None or unread.origin != "form":  # not settled, past a bound: SG313-SG315
        return
    span = Span(unread.line, unread.column or 1) if unread.line is not None else None
    yield Hit(
        f"{unread.reason}; this deployment is judged on the claims file's stated values",
        ctx.deployment.path("speculation", "engine_config"),
        "State speculation.mechanism and speculation.draft_length in the claims file, "
        "or point engine_config at a configuration specgate reads (docs/engines.md).",
        where=(unread.file, span),
        subject="engine_config",
        details="what specgate reads, settles or leaves unread: docs/engines.md#not-read",
        severity="fail" if unread.severity == "fail" else None,
    )
