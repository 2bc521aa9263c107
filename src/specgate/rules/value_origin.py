"""Rules on serving-config values a launcher reader cannot settle, by where they are
set (docs/engines.md#unsettled-values): from outside the repository, the
deployment's, so the claims file's stated values are used (SG313, a warn); by the
repository in a way specgate does not follow, where a pull request could hide D
(SG314, a fail); a draft-token count read past specgate's bounds (SG315, a fail,
docs/engines.md#out-of-bounds). The finding sits at the value's line in the serving
file, where ``# specgate: ignore[CODE] -- reason`` accepts it (docs/trust.md#unsettled-values)."""

from __future__ import annotations

from collections.abc import Iterator

from specgate.core.numbers import fmt
from specgate.load.document import Span
from specgate.model.referenced import EngineUnread
from specgate.rules.engine_issues import model_unread_hit
from specgate.rules.registry import Hit, RuleContext, rule


def _unsettled(ctx: RuleContext, origin: str) -> EngineUnread | None:
    inputs = ctx.deployment.inputs
    unread = inputs.engine_unread if inputs is not None else None
    return unread if unread is not None and unread.origin == origin else None


def _at(unread: EngineUnread) -> str:
    return f"{unread.file}:{unread.line}" if unread.line is not None else unread.file


def _named(unread: EngineUnread) -> str:
    """The value as the message names it: "`DRAFT` (os.environ['DRAFT'], serve.py:4)"
    when a variable gets it elsewhere, else "`$NUM` at run.sh:2"."""
    if unread.source:
        # several variables any of which may set the value: each named
        what = "` or `".join(unread.what.split(" or "))
        return f"`{what}` ({unread.source})"
    return f"`{unread.what}` at {_at(unread)}"


def _span(unread: EngineUnread) -> Span | None:
    return Span(unread.line, unread.column or 1) if unread.line is not None else None



def _read_around(ctx: RuleContext) -> bool:
    """Whether the serving config was read around the value (a Python dict's other
    keys, which settle D and the method without it: docs/engines.md#unsettled-values)."""
    inputs = ctx.deployment.inputs
    return inputs is not None and inputs.engine is not None and not _left(ctx)


def _left(ctx: RuleContext) -> tuple[str, ...]:
    """What the value leaves unsettled of a serving config read around it (SGLang's
    keywords one by one: ``"the method"``, ``"D"``), else ``()``."""
    inputs = ctx.deployment.inputs
    engine = inputs.engine if inputs is not None else None
    left = engine.resolution.get("unsettled") if engine is not None else None
    return tuple(str(part) for part in left) if isinstance(left, tuple) else ()


def _stated(ctx: RuleContext) -> str:
    """What the claims file states in place of the value: mechanism and D."""
    if _read_around(ctx):
        return "it changes neither D nor the method, so the file's other values are read"
    spec = ctx.deployment.speculation
    left = _left(ctx)
    if left:
        used = [f"mechanism {spec.mechanism}" if "the method" in left and spec.mechanism
                else None, f"D {fmt(spec.draft_length)}" if spec.draft_length is not None
                else None]
        named = " and ".join(p for p in used if p) or "nothing it states (neither is judged)"
        return (f"it leaves {' and '.join(left)} unsettled: specgate used the claims file's "
                f"{named}, and the file's other values are read")
    parts = []
    if spec.mechanism is not None:
        parts.append(f"mechanism {spec.mechanism}")
    if spec.draft_length is not None:
        parts.append(f"D {fmt(spec.draft_length)}")
    if not parts:
        return "the claims file states no mechanism or D, so neither is judged"
    return "specgate used the claims file's " + " and ".join(parts)


def _fix(ctx: RuleContext) -> str:
    """SG313's next action: state what the claims file does not state yet, or keep
    what it states in step with the deployment."""
    if _read_around(ctx):
        return (
            "Write the value in the serving config, or accept it with "
            "`# specgate: ignore[SG313] -- reason` on its line."
        )
    spec = ctx.deployment.speculation
    if spec.mechanism is not None and spec.draft_length is not None:
        return (
            "Keep speculation.mechanism and speculation.draft_length in the claims file "
            "as the deployment sets them, or write the value in the serving config."
        )
    return (
        "State speculation.mechanism and speculation.draft_length in the claims file as "
        "the deployment sets them, or write the value in the serving config."
    )


@rule(
    "SG313",
    "value-from-deployment",
    "warn",
    "A serving config value is set from outside the repository (the environment, the "
    "script's arguments); the claims file's stated values are used.",
    fail_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        SPEC='{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'
        vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "$SPEC" "$@"
    """,
    pass_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        SPEC='{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'
        vllm serve meta-llama/Llama-3.1-8B-Instruct "$@" --speculative-config "$SPEC"
    """,
)
def value_from_deployment(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** Every value of the serving config that can set the
    speculative method or the draft length D is settled by the files specgate reads.
    When one is set from outside the repository (an environment variable that
    neither the script nor any file specgate reads assigns, a Compose `${VAR}` that
    no `.env` and no default fills in, the script's arguments `"$@"` or `$1`,
    Python's `os.environ[...]`, `os.getenv(...)` or `sys.argv`), this finding names
    it at its line, and the deployment is judged on what the claims file states
    (`speculation.mechanism`, `speculation.draft_length`).

    **Why.** Such a value is the deployment's, not the pull request's: the
    environment that runs the launcher supplies it, and the claims file is where the
    team states what it supplies. specgate cannot see it, so it warns (a fail may
    not rest on a value nobody stated); a team that accepts it puts
    `# specgate: ignore[SG313] -- reason` on that line of the serving file.
    """
    unread = _unsettled(ctx, "outside")
    if unread is None:
        return
    if unread.otherwise:  # variables any of which the deployment may set (envFrom)
        said = (
            f"{_named(unread)} may be set outside the repository; "
            f"{'if none is set' if ' or ' in unread.what else 'if it is not set'}, "
            f"{unread.otherwise}; {_stated(ctx)}"
        )
    else:
        said = (
            f"{_named(unread)} is set outside the repository (the deployment supplies it); "
            f"{_stated(ctx)}"
        )
    yield Hit(
        said,
        ctx.deployment.path("speculation", "engine_config"),
        _fix(ctx),
        where=(unread.file, _span(unread)),
        subject="engine_config",
        details=unread.reason,
    )


@rule(
    "SG314",
    "value-unfollowed",
    "fail",
    "The repository sets a serving config value in a way specgate cannot read "
    "($(...), a sourced file, a computed Python value), so it may hide D.",
    fail_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        SPEC=$(cat spec.json)
        vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "$SPEC"
    """,
    pass_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        SPEC='{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'
        vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "$SPEC"
    """,
)
def value_unfollowed(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** No value that can set the speculative method or D is set by
    the repository in a way specgate does not follow: a command substitution `$(…)`,
    a sourced file it does not read, an `eval`, a loop or other compound body, a
    Python value computed by a function call, a launcher reached through `exec` or
    `getattr` with a computed name. Such a value is a finding at its line in the
    serving file; the deployment is otherwise judged on what the claims file states.

    **Why.** The pull request controls every byte of the repository: a D set there
    in a form specgate cannot read could differ from the claims file, and nothing
    would show it. So it fails, the same as a D read and found wrong. A team that
    has read the code and accepts it puts `# specgate: ignore[SG314] -- reason` on
    that line of the serving file (or alone on the line before it), where a
    reviewer of the next change sees it.
    """
    unread = _unsettled(ctx, "repository")
    if unread is None:
        return
    yield Hit(
        f"the repository decides D at {_at(unread)} in a way specgate cannot read "
        f"({_named(unread) if unread.source else f'`{unread.what}`'}); {_stated(ctx)}",
        ctx.deployment.path("speculation", "engine_config"),
        "Write the speculative flags literally in the serving config, or accept it with "
        "`# specgate: ignore[SG314] -- reason` on that line.",
        where=(unread.file, _span(unread)),
        subject="engine_config",
        details=unread.reason,
    )


@rule(
    "SG315",
    "value-out-of-bounds",
    "fail",
    "The serving config sets a draft-token count past specgate's bounds (above 1,024, "
    "below what counts tokens), so D is not judged from it.",
    fail_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        SPEC='{"method": "ngram", "num_speculative_tokens": 2000, "prompt_lookup_max": 4}'
        vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "$SPEC"
    """,
    pass_example="""
        version: 1
        deployments:
          - name: vllm-ngram
            speculation:
              enabled: true
              engine_config: serving/run.sh
              mechanism: ngram
              draft_length: 4
            evidence:
              accept_length: 2.1
        # === serving/run.sh ===
        SPEC='{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}'
        vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "$SPEC"
    """,
)
def value_out_of_bounds(ctx: RuleContext) -> Iterator[Hit]:
    """
    **What it checks.** Every draft-token count the serving config sets (D, a tree's
    nodes, a verify width) lies within the bounds specgate judges in: at most 1,024
    (docs/trust.md#bounded-work) and at least what counts tokens. A count past them
    is a finding at its line in the serving file; the deployment is otherwise judged
    on what the claims file states, and every other deployment is still checked. A
    number Python's `int()` cannot read (more than 4,300 digits) is no number to the
    engine either, and stays an input error of the file (exit 2). A model config
    (`model.hf_config`, `speculation.draft_hf_config`) holding a head count above
    65,536 or another whole number above 2^53, or KV heads that exceed or do not
    divide the attention heads, is the same finding at its line: the
    model config is not read, and the deployment is judged on the model values the
    claims file states.

    **Why.** No number a repository holds may set how long specgate works, so a D
    past the bound is not computed with; it used to stop the whole run (exit 2).
    The pull request controls that number, and a D set past the bound would slip a
    claim past every check, so it fails, the same as a D read and found wrong. A team
    that means it puts `# specgate: ignore[SG315] -- reason` on that line of the
    serving file.
    """
    model = model_unread_hit(
        ctx,
        "bound",
        "Check the model config's numbers, or state the model's values in the claims "
        "file in place of it.",
        "docs/engines.md#out-of-bounds",
    )
    if model is not None:
        yield model
    unread = _unsettled(ctx, "bound")
    if unread is None:
        return
    yield Hit(
        f"{unread.reason}, so D is not judged from the serving config; "
        f"{_stated(ctx)}",
        ctx.deployment.path("speculation", "engine_config"),
        "Set the count within specgate's bounds in the serving config, or accept it with "
        "`# specgate: ignore[SG315] -- reason` on that line.",
        where=(unread.file, _span(unread)),
        subject="engine_config",
        details="docs/engines.md#out-of-bounds",
    )
