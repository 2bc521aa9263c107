"""Replay the engines' own answers (tests/data/engine_oracle/*.json) through specgate.

Each record is one configuration an engine resolved or refused (the record schema is in
tests/data/engine_oracle/README.md). :func:`materialize` writes, per record, the serving
file a user would commit (a ``vllm serve`` YAML, a launcher command line, a transformers
``generate()`` keyword file) and a claims file pointing at it with the engine version
the record was taken at, one setting per line so a finding's line names the setting.
:func:`outcome` checks one claims file in-process; :func:`disagreements` lists what
specgate says that the engine did not:

- the engine refused ⇒ a fail-severity finding (SG307, SG310, SG302; SG301 never) on the
  line of the setting the refusal concerns (its ``concerns`` key or flag; any line of the
  speculative settings when the refusal names none), or an input error (exit 2) at that
  line for a value of the wrong type;
- the engine accepted ⇒ no fail-severity engine finding (SG307/SG310/SG302) and no input
  error, and specgate's reading (``inputs.engine``) equals the engine's resolution:
  mechanism, D, N_verify, draft model, draft TP, target TP, lossy acceptance, one pass.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specgate.check.report import FileReport
from specgate.check.run import CheckOptions, check_file
from specgate.inputs.knowledge import parse_version

DATA = Path(__file__).resolve().parent.parent / "data" / "engine_oracle"
MODELS = DATA / "models"

#: vLLM ``method`` after its rewrites → specgate mechanism (data/engines/vllm.json
#: ``methods``: dspark, extract_hidden_states and custom_class are ``other``).
VLLM_MECHANISMS = {
    "ngram": "ngram",
    "ngram_gpu": "ngram",
    "suffix": "suffix",
    "eagle": "eagle",
    "eagle3": "eagle3",
    "medusa": "medusa",
    "mtp": "mtp",
    "draft_model": "draft_model",
    "mlp_speculator": "mlp_speculator",
    "dflash": "dflash",
}
#: SGLang ``speculative_algorithm`` after resolution (NEXTN → EAGLE) → mechanism.
SGLANG_MECHANISMS = {
    "EAGLE": "eagle",
    "EAGLE3": "eagle3",
    "STANDALONE": "draft_model",
    "NGRAM": "ngram",
    "DFLASH": "dflash",
}
#: Codes that carry an engine refusal (SG301 is a claims-file disagreement: never).
REFUSAL_CODES = frozenset({"SG307", "SG310", "SG302"})
#: Engine messages of a value of the wrong type: an input error (exit 2) answers these.
_TYPE_ERRORS = (
    "valid integer",
    "valid boolean",
    "valid string",
    "valid list",
    "valid dict",
    "valid number",
    "invalid int value",
    "invalid float value",
    "cannot be converted",
    "JSON",
    "fractional part",
    "has no attribute 'get'",
)


@dataclass
class Case:
    """One record written as files: ``claims`` (name in the folder), ``config`` (the
    serving file's name), ``lines``: setting name → its line in ``config``, ``block``:
    the lines of the speculative settings."""

    record: dict[str, Any]
    engine: str
    version: str
    claims: str
    config: str
    files: dict[str, str]
    lines: dict[str, int] = field(default_factory=dict)
    block: set[int] = field(default_factory=set)

    @property
    def id(self) -> str:
        return str(self.record["id"])


#: A release's records; a post-release (sglang-0.5.12.post1.json) is a release of its own.
_RELEASE_FILE = re.compile(r"^(vllm|sglang|transformers)-(\d+(?:\.\d+)*(?:\.post\d+)?)\.json$")


def release_files(folder: Path = DATA) -> list[str]:
    """Every release's records in ``folder`` (``ENGINE-VERSION.json``; not the
    ``parser-*``, ``*-mtp-*`` or disagreement files), by engine then release: what
    scripts/refresh_engine_data.py writes is replayed without a list to edit."""
    found = [m for p in folder.glob("*.json") if (m := _RELEASE_FILE.match(p.name))]
    found.sort(key=lambda m: (m.group(1), parse_version(m.group(2)) or ()))
    return [m.group(0)[: -len(".json")] for m in found]


def load(name: str, folder: Path = DATA) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, records) of ``tests/data/engine_oracle/NAME.json``, whole: a release
    stored as its differences from another (``header.base``, written by
    scripts/refresh_engine_data.py ``compact_records``) gets the base's records named in
    ``header.from_base`` back, sorted by id as the recorder writes them."""
    doc = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    header, records = doc["header"], doc["records"]
    if "base" not in header:
        return header, records
    base = json.loads((folder / f"{header['base']}.json").read_text(encoding="utf-8"))
    assert "base" not in base["header"], f"{name}: its base is not stored whole"
    wanted = set(header["from_base"])
    taken = [r for r in base["records"] if r["id"] in wanted]
    assert len(taken) == len(wanted), f"{name}: records missing from {header['base']}"
    return header, sorted([*records, *taken], key=lambda r: str(r["id"]))


def unknown_keys(name: str) -> set[str]:
    """The ``speculative_config`` keys release ``name`` refused as unknown in its
    recorded answers (pydantic's "Unexpected keyword argument" at that key alone)."""
    out: set[str] = set()
    for record in load(name)[1]:
        answer = record["answer"]
        refusal = answer.get("refusal") or {}
        if (
            answer["status"] == "refused"
            and refusal.get("message") == "Unexpected keyword argument"
            and refusal.get("concerns")
        ):
            out.add(str(refusal["concerns"]))
    return out


def releases_refusing_key(engine: str, key: str) -> list[str]:
    """The recorded releases of ``engine`` whose answers refuse ``key`` as unknown,
    oldest first: what a test of a former key states, so a new recording needs no edit."""
    prefix = f"{engine}-"
    return [
        name.removeprefix(prefix)
        for name in release_files()
        if name.startswith(prefix) and key in unknown_keys(name)
    ]


def _rel(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("$MODELS/", "models/")
    if isinstance(value, list):
        return [_rel(v) for v in value]
    if isinstance(value, dict):
        return {k: _rel(v) for k, v in value.items()}
    return value


def _named_models(record: Mapping[str, Any]) -> list[str]:
    blob = json.dumps({k: v for k, v in record.items() if k != "answer"})
    return [p.name for p in MODELS.iterdir() if f"$MODELS/{p.name}" in blob]


def _draft_key(record: Mapping[str, Any]) -> str | None:
    """The draft model the record names (not the target), longest name first."""
    names = sorted(
        (n for n in _named_models(record) if n != record["target"]), key=len, reverse=True
    )
    blob = json.dumps(
        record.get("speculative_config") or record.get("argv") or record.get("assistant") or ""
    )
    for name in names:
        if f"$MODELS/{name}" in blob or name == record.get("assistant"):
            return name
    return None


def _claims(
    case_id: str, engine: str, version: str, *, config: str, target: str, draft: str | None
) -> str:
    lines = [
        "version: 1",
        "deployments:",
        f"  - name: {case_id}",
        "    model:",
        f"      hf_config: models/{target}/config.json",
        "    speculation:",
        "      enabled: true",
        f"      engine: {engine}",
        f'      engine_version: "{version}"',
        f"      engine_config: {config}",
    ]
    if draft is not None:
        lines.append(f"      draft_hf_config: models/{draft}/config.json")
    lines += ["    evidence:", "      accept_length: 1.5", "      cache_coherence_eval: true"]
    return "\n".join(lines) + "\n"


def _yaml_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _vllm_yaml(case: Case) -> str:
    r = case.record
    out = [f"model: models/{r['target']}"]
    case.lines["model"] = 1
    for key, value in (r.get("engine_args") or {}).items():
        out.append(f"{key.replace('_', '-')}: {_yaml_value(value)}")
        case.lines[key] = len(out)
    spec = _rel(r["speculative_config"])
    if not spec:
        out.append("speculative-config: {}")
        case.block.add(len(out))
    else:
        out.append("speculative-config:")
        case.block.add(len(out))
        for key, value in spec.items():
            out.append(f"  {key}: {_yaml_value(value)}")
            case.lines[f"block:{key}"] = len(out)
            case.block.add(len(out))
    return "\n".join(out) + "\n"


def _command(case: Case, head: str, argv: list[str]) -> str:
    """``head`` then each option on its own line (``\\`` continuations)."""
    lines = [head]
    for word in argv:
        text = shlex.quote(word)
        if word.startswith("-") or len(lines) == 1:
            lines.append(text)
        else:
            lines[-1] += " " + text
    out = []
    for number, line in enumerate(lines, start=1):
        first = line.split(" ", 1)[0]
        if first.startswith("-"):
            flag = first.split("=", 1)[0]
            case.lines.setdefault(flag, number)
            if "spec" in flag or "draft" in flag or flag.strip("-").split(".")[0] == "sc":
                case.block.add(number)
        out.append(line + (" \\" if number < len(lines) else ""))
    return "\n".join(out) + "\n"


def _vllm_cli(case: Case) -> str:
    r = case.record
    argv = [w.replace("$CASE/", f"{case.id}.") for w in _rel(r["argv"])]
    for name, content in (r.get("files") or {}).items():
        case.files[f"{case.id}.{name}"] = _rel(content)
    return _command(case, "vllm serve", argv)


def _sglang_cli(case: Case) -> str:
    r = case.record
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in (r.get("env") or {}).items())
    head = (env + " " if env else "") + "python -m sglang.launch_server"
    text = _command(case, head, _rel(r["argv"]))
    if env:
        case.block.add(1)
    return text


def _transformers_yaml(case: Case) -> str:
    """The generate() keyword arguments as a mapping; what the record set on the
    assistant's own generation_config goes under ``assistant_generation_config`` (the
    candidate generator reads it there, and ignores the same keys given to generate());
    both tokenizers, when the record passed them, as ``tokenizer``/``assistant_tokenizer``."""
    r = case.record
    kw: dict[str, Any] = dict(r["kwargs"])
    if r.get("assistant"):
        kw["assistant_model"] = f"models/{r['assistant']}"
    if r.get("batch", 1) > 1:
        kw["batch_size"] = r["batch"]
    if r.get("tokenizers"):
        kw["tokenizer"] = f"models/{r['target']}"
        kw["assistant_tokenizer"] = f"models/{r['assistant']}"
    out = []
    for key, value in kw.items():
        out.append(f"{key}: {_yaml_value(_rel(value))}")
        case.lines[key] = len(out)
        case.block.add(len(out))
    own = r.get("assistant_generation_config") or {}
    if own:
        out.append("assistant_generation_config:")
        for key, value in own.items():
            out.append(f"  {key}: {_yaml_value(_rel(value))}")
            case.lines[key] = len(out)
            case.block.add(len(out))
    return "\n".join(out) + "\n"


def cases(name: str) -> list[Case]:
    """Every record of ``NAME.json`` without a ``caveat``, as files."""
    header, records = load(name)
    engine, version = header["engine"], header["engine_version"]
    out = []
    for r in records:
        if "caveat" in r:
            continue
        rid = r["id"]
        if engine == "vllm":
            config = f"{rid}.{'serve.yaml' if r['via'] == 'engine_args' else 'cmd.txt'}"
        elif engine == "sglang":
            config = f"{rid}.cmd.txt"
        else:
            config = f"{rid}.generate.yaml"
        case = Case(r, engine, version, f"{rid}.specgate.yaml", config, {})
        if engine == "vllm":
            text = _vllm_yaml(case) if r["via"] == "engine_args" else _vllm_cli(case)
        elif engine == "sglang":
            text = _sglang_cli(case)
        else:
            text = _transformers_yaml(case)
        case.files[config] = text
        draft = _draft_key(r) if engine != "transformers" else r.get("assistant")
        case.files[case.claims] = _claims(
            rid, engine, version, config=config, target=r["target"], draft=draft
        )
        out.append(case)
    return out


def materialize(folder: Path, batch: list[Case]) -> None:
    """Write the cases and the tiny models' configs into ``folder``."""
    for path in MODELS.iterdir():
        target = folder / "models" / path.name
        target.mkdir(parents=True, exist_ok=True)
        (target / "config.json").write_bytes((path / "config.json").read_bytes())
    for case in batch:
        for name, text in case.files.items():
            (folder / name).write_text(text, encoding="utf-8")


def outcome(folder: Path, case: Case) -> FileReport:
    """specgate's report on the case's claims file (in-process)."""
    return check_file(folder / case.claims, case.claims, CheckOptions())


# --- what the engine said ---------------------------------------------------------


def engine_reading(case: Case) -> dict[str, Any] | None:
    """The engine's resolution in specgate's terms; None when it refused."""
    answer = case.record["answer"]
    if answer["status"] != "ok":
        return None
    res = answer["resolved"]
    if case.engine == "vllm":
        return _vllm_reading(case, res)
    if case.engine == "sglang":
        return _sglang_reading(case, res)
    return _transformers_reading(res)


def _vllm_reading(case: Case, res: Mapping[str, Any]) -> dict[str, Any]:
    if res.get("speculative") is False:
        # the engine started without a SpeculativeConfig (`--speculative-config ""`):
        # no mechanism, as SGLang's NONE (specgate: "no speculative decoding configured")
        return {"mechanism": None}
    method = res.get("method")
    d = res.get("num_speculative_tokens")
    out: dict[str, Any] = {
        "mechanism": VLLM_MECHANISMS.get(method, "other"),
        "draft_length": d,
        # VllmConfig.uniform_decode_query_len = 1 + D (0.32); earlier releases verify
        # the same 1 + D tokens but do not expose the number
        "verify_tokens": res.get("verify_tokens") or (None if d is None else d + 1),
        "lossy_acceptance": res.get("rejection_sample_method") == "synthetic",
    }
    model = res.get("model")
    if isinstance(model, str) and model.startswith("$MODELS/") and method not in ("mtp",):
        out["draft_model"] = _rel(model)
    draft_tp = res.get("draft_tensor_parallel_size")
    if draft_tp is not None and method not in ("draft_model", "mlp_speculator"):
        # every proposer but DraftModelProposer builds its draft with the target's
        # parallel config (vllm/v1/spec_decode/llm_base_proposer.py
        # _create_draft_vllm_config, v0.27.1 and v0.32.0): the draft runs at the
        # target's TP whatever the config object holds
        draft_tp = res.get("target_tensor_parallel_size", draft_tp)
    if draft_tp is not None:
        out["draft_tensor_parallel_size"] = draft_tp
    if res.get("parallel_drafting"):
        out["draft_passes"] = "single"
    return out


def _sglang_reading(case: Case, res: Mapping[str, Any]) -> dict[str, Any]:
    algo = res.get("speculative_algorithm")
    steps = res.get("speculative_num_steps")
    n = res.get("speculative_num_draft_tokens")
    if algo == "NONE":
        return {"mechanism": None}
    mechanism = SGLANG_MECHANISMS.get(algo, "other")
    draft = res.get("speculative_draft_model_path")
    if algo == "EAGLE" and draft is not None and draft == res.get("model_path"):
        mechanism = "mtp"
    d = (None if n is None else n - 1) if algo in ("NGRAM", "DFLASH") else steps
    out: dict[str, Any] = {
        "mechanism": mechanism,
        "draft_length": d,
        "verify_tokens": n,
        "tensor_parallel_size": res.get("tp_size"),
    }
    if draft is not None and draft != res.get("model_path"):
        out["draft_model"] = _rel(draft)
    return out


def _transformers_reading(res: Mapping[str, Any]) -> dict[str, Any]:
    if not res.get("assisted"):
        return {"mechanism": None}
    generator = str(res.get("candidate_generator", ""))
    if generator.startswith("PromptLookup"):
        return {"mechanism": "ngram", "draft_length": res.get("num_output_tokens")}
    return {"mechanism": "draft_model", "draft_length": res.get("num_assistant_tokens")}


def _setting_on(text: str, name: str) -> bool:
    """Whether a line's text names the setting ``name`` (``-`` and ``_`` alike)."""
    bare = name.split("/", maxsplit=1)[0].lstrip("-").replace("-", "_")
    return bare in text.replace("-", "_")


def at_setting(case: Case, file: str | None, line: int | None) -> bool:
    """Whether a finding at ``file``:``line`` stands on the setting the refusal concerns.

    The engine names the setting (a pydantic location, an argparse flag): that line, in
    the serving file or a file it includes (``--config``). Otherwise ``concerns`` is the
    first setting the message mentions, and a refusal of a combination
    ("num_speculative_tokens was provided but without speculative model") may stand on
    any speculative setting; a message that names none, on any line of the serving file.
    """
    if file is None or line is None or file == case.claims or file not in case.files:
        return False
    answer = case.record["answer"]
    refusal = answer.get("refusal") or {}
    concerns = refusal.get("concerns")
    lines = case.files[file].splitlines()
    if not 1 <= line <= len(lines):
        return False
    if concerns is None:
        return True
    if _setting_on(lines[line - 1], concerns):
        return True
    exact = bool(refusal.get("loc")) or answer.get("stage") == "parse"
    return not exact and file == case.config and line in case.block


# --- the comparison ---------------------------------------------------------------


def _engine_view(report: FileReport) -> Mapping[str, Any]:
    if not report.deployments:
        return {}
    inputs = report.deployments[0].deployment.inputs
    engine = inputs.engine if inputs is not None else None
    if engine is None:
        return {}
    return {
        "mechanism": engine.mechanism,
        "draft_length": engine.draft_length,
        "verify_tokens": engine.verify_tokens,
        "lossy_acceptance": engine.lossy_acceptance,
        "draft_model": engine.draft_model,
        "draft_tensor_parallel_size": engine.draft_tensor_parallel_size,
        "tensor_parallel_size": engine.tensor_parallel_size,
        "draft_passes": engine.draft_passes,
    }


def _fails(report: FileReport) -> Iterator[tuple[str, str | None, int | None, str]]:
    for finding in report.all_findings():
        if finding.severity == "fail" and finding.code in REFUSAL_CODES:
            yield finding.code, finding.file, finding.line, finding.message


def disagreements(case: Case, report: FileReport) -> list[str]:
    """What specgate says that the engine did not (empty: they agree)."""
    answer = case.record["answer"]
    reading = engine_reading(case)
    fails = list(_fails(report))
    if reading is None:
        refusal = answer.get("refusal") or {}
        message = str(refusal.get("message", ""))[:160]
        if report.error is not None:
            typed = answer.get("stage") == "parse" or any(t in message for t in _TYPE_ERRORS)
            if not typed:
                return [f"input error where the engine refuses ({message!r}): {report.error}"]
            if at_setting(case, report.error_file, report.error_line):
                return []
            return [f"input error at {report.error_file}:{report.error_line}: {report.error}"]
        if not fails:
            return [f"engine refuses ({message!r}); specgate reports no fail"]
        if any(at_setting(case, file, line) for _, file, line, _ in fails):
            return []
        return [f"fail not at the setting: {[(c, f, n) for c, f, n, _ in fails]}"]
    if (
        reading.get("mechanism") is None
        and report.error is not None
        and "no speculative decoding configured" in report.error
    ):
        # the engine runs without speculation (SGLang NONE, transformers without an
        # assistant): "no speculative decoding configured" is specgate's same answer
        return []
    if report.error is not None:
        return [f"engine accepts; specgate input error: {report.error}"]
    out = [f"engine accepts; specgate {code} fail: {message}" for code, _, _, message in fails]
    view = _engine_view(report)
    for key, value in reading.items():
        if key == "tensor_parallel_size" and view.get(key) is None and value == 1:
            continue  # not stated: the engine's default, 1
        if view.get(key) != value:
            out.append(f"{key}: engine {value!r}, specgate {view.get(key)!r}")
    return out


# --- agreement per release (a maintainer's command) ---------------------------------


def replay_file(name: str, folder: Path) -> dict[str, list[str]]:
    """Record id → what specgate says that the engine did not, for every replayed record
    of ``NAME.json`` (files written under ``folder``)."""
    from specgate.model.reads import shared_reads

    batch = cases(name)
    materialize(folder, batch)
    with shared_reads():
        return {c.id: disagreements(c, outcome(folder, c)) for c in batch}


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.oracle.replay [--unread FILE]``: agreement per release
    (records agreeing / replayed). With ``--unread``, the disagreeing records of every
    release that tests/data/engine_oracle/disagreements.json lists nothing of are added
    to FILE (a copy of it) as one kind per release, "not yet read": what a newly
    recorded release's pull request holds until a maintainer sorts them by kind."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--unread", type=Path, default=None)
    args = ap.parse_args(argv)
    known = json.loads((DATA / "disagreements.json").read_text(encoding="utf-8"))
    listed = {rid.split(":", 1)[0] for kind in known["kinds"] for rid in kind["ids"]}
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in release_files():
            folder = Path(tmp) / name
            folder.mkdir()
            found = replay_file(name, folder)
            agree = sum(1 for d in found.values() if not d)
            rows[name] = (agree, len(found))
            print(f"{name}: {agree}/{len(found)}", flush=True)
            if args.unread is not None and name not in listed and agree < len(found):
                known["kinds"].append(
                    {
                        "reason": f"{name}: not yet read (recorded by "
                        "scripts/refresh_engine_data.py; sort by kind against the engine's "
                        "source at the release's tag)",
                        "ids": sorted(f"{name}:{rid}" for rid, d in found.items() if d),
                    }
                )
    if args.unread is not None:
        args.unread.write_text(json.dumps(known, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
