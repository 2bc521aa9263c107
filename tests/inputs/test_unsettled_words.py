"""Words of an engine's command that a launcher's text does not settle (hostile review
r4 defect 2): each launcher below states D = 3 literally and adds D = 12 with a
second ``--speculative-config``; the last flag wins (argparse), so the engine runs 12.
specgate either reads the 12 exactly (``set --``, bash arrays, Compose ``.env``) or
refuses the file at the word's line (exit 2), never reads 3. A word standing before
the speculative flags (the literal flags after it win) or in a flag's value place is a
note naming it. The argv a real shell passes is cross-checked with a stub ``vllm``
that prints it (skipped without bash)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from specgate.core.errors import InputError, UnsettledValue
from specgate.inputs.cmdline import split_commands
from specgate.inputs.engines import read_engine_config, read_engine_file
from specgate.load.compose_env import parse_dotenv
from specgate.load.document import Document

D3 = """'{"method":"eagle3","model":"y","num_speculative_tokens":3}'"""
D12 = """'{"method":"eagle3","model":"y","num_speculative_tokens":12}'"""
M = "meta-llama/Llama-3.1-8B-Instruct"


def _script(text: str) -> tuple[int | None, tuple[str, ...]]:
    doc = Document(file="serve.sh", data=text)
    config = read_engine_config(doc, shown="serve.sh", pointer=None, engine="vllm", text=text)
    return config.draft_length, config.notes


# --- resolved exactly: D = 12, what `sh`/`bash` pass (stub cross-check below) ----------

RESOLVED = {
    # the reviewer's 2-set and 2-array
    "set": f'set -- --speculative-config {D12}\nvllm serve {M} --speculative-config {D3} "$@"\n',
    "array": f"ARGS=(--speculative-config {D12})\nvllm serve {M} --speculative-config {D3} "
    '"${ARGS[@]}"\n',
    # forms the reviewer did not try
    "braced-at": f"set -- --speculative-config {D12}\nvllm serve {M} --speculative-config {D3} "
    "${@}\n",
    "array-star": f"ARGS=(--speculative-config={D12})\nvllm serve {M} --speculative-config {D3} "
    '"${ARGS[*]}"\n',
    "array-lines": f"ARGS=(\n  --port 8000  # the port\n  --speculative-config {D12}\n)\n"
    f'vllm serve {M} --speculative-config {D3} "${{ARGS[@]}}"\n',
    "shift": f"set -- x --speculative-config {D12}\nshift\nvllm serve {M} "
    f'--speculative-config {D3} "$@"\n',
    "positional": f"set -- --speculative-config {D12}\nvllm serve {M} --speculative-config {D3} "
    '"$1" "$2"\n',
}


@pytest.mark.parametrize("name", RESOLVED)
def test_resolved_forms_read_the_twelve_the_engine_runs(name: str) -> None:
    # num_speculative_tokens of the last --speculative-config: 12 (argparse, last wins)
    draft, notes = _script(RESOLVED[name])
    assert draft == 12
    assert not [n for n in notes if "cannot see" in n]


@pytest.mark.parametrize("name", RESOLVED)
def test_a_real_shell_passes_the_same_words(name: str, tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    stub = tmp_path / "bin" / "vllm"
    stub.parent.mkdir()
    stub.write_text(
        "#!/bin/sh\nexec python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' \"$@\"\n"
    )
    stub.chmod(0o755)
    script = tmp_path / "serve.sh"
    script.write_text(RESOLVED[name])
    run = subprocess.run(
        [bash, str(script)],
        capture_output=True,
        text=True,
        env={"PATH": f"{stub.parent}:/usr/bin:/bin"},
        check=True,
        timeout=30,
    )
    printed = json.loads(run.stdout.strip().splitlines()[-1])
    (command,) = [c for c in split_commands(RESOLVED[name]) if c.argv[0] == "vllm"]
    assert list(command.argv[1:]) == printed


def test_sh_c_arguments_are_the_scripts_positional_parameters() -> None:
    # sh -c SCRIPT NAME ARGS…: "$@" in SCRIPT is ARGS (POSIX sh, -c); the last wins
    text = (
        f"sh -c 'vllm serve {M} \"$@\"' sh --speculative-config {D3} --speculative-config {D12}\n"
    )
    assert _script(text)[0] == 12


# --- not settled: an input error at the word's line -----------------------------------

REFUSED = {
    # the reviewer's 2-source: `. ./extra.env` may set EXTRA
    "source-dot": (
        f". ./extra.env\nvllm serve {M} --speculative-config {D3} $EXTRA\n",
        2,
        "$EXTRA",
    ),
    "source": (
        f'source extra.env\nvllm serve {M} --speculative-config {D3} "$EXTRA"\n',
        2,
        "$EXTRA",
    ),
    "eval": (f'eval "$SETUP"\nvllm serve {M} --speculative-config {D3} $X\n', 2, "$X"),
    "script-arguments": (
        f'exec vllm serve {M} \\\n  --speculative-config {D3} \\\n  "$@"\n',
        3,
        "$@",
    ),
    "environment": (
        f"vllm serve {M} --speculative-config {D3} ${{EXTRA_ARGS:-}}\n",
        1,
        "${EXTRA_ARGS:-}",
    ),
    "read": (f"read EXTRA\nvllm serve {M} --speculative-config {D3} $EXTRA\n", 2, "$EXTRA"),
    "substitution": (f"vllm serve {M} --speculative-config {D3} $(cat extra.txt)\n", 1, "$(cat"),
    "array-unassigned": (
        f'vllm serve {M} --speculative-config {D3} "${{ARGS[@]}}"\n',
        1,
        "${ARGS[@]}",
    ),
    "tainted": (f"X=${{EXTRA:-}}\nvllm serve {M} --speculative-config {D3} $X\n", 2, "$X"),
    # a value place does not protect a word the shell splits and a file fills:
    # PORT="8000 --speculative-config …" in x.env adds a flag
    "unquoted-value": (
        f". ./x.env\nvllm serve {M} --speculative-config {D3} --port $PORT\n",
        2,
        "$PORT",
    ),
}


@pytest.mark.parametrize("name", REFUSED)
def test_unsettled_words_after_the_speculative_flags_refuse_the_file(name: str) -> None:
    text, line, word = REFUSED[name]
    with pytest.raises(InputError) as caught:
        _script(text)
    assert caught.value.line == line
    assert f"`{word}" in caught.value.reason
    assert "cannot see what it adds" in caught.value.reason


def test_no_speculative_flag_stated_is_refused() -> None:
    # the word may add them; the command states none, so nothing is read as speculative:
    # the error names the word (issue 25), not only "no speculative decoding configured"
    with pytest.raises(InputError) as caught:
        _script(f"vllm serve {M} $EXTRA\n")
    assert caught.value.line == 1
    assert "`$EXTRA`" in caught.value.reason
    assert "the command states no speculative flag, so it may add them" in caught.value.reason


# --- harmless: a note naming the word ---------------------------------------------------


def test_a_word_before_the_speculative_flags_is_a_note() -> None:
    # the literal --speculative-config after "$MODEL" wins over anything it holds
    draft, notes = _script(f'vllm serve "$MODEL" --speculative-config {D3}\n')
    assert draft == 3
    assert any("`$MODEL`" in n and "line 1" in n for n in notes)


def test_a_quoted_word_in_a_flags_value_place_is_a_note() -> None:
    # "--port" takes a value (vLLM 0.32.0's recorded parser): one word there is its value
    draft, notes = _script(f'vllm serve {M} --speculative-config {D3} --port "$PORT"\n')
    assert draft == 3
    assert any("`$PORT`" in n and "a flag's value" in n for n in notes)


def test_an_unquoted_value_from_the_environment_is_a_note() -> None:
    # the environment is the deployment's, not the pull request's: a flag's value
    draft, notes = _script(f"vllm serve {M} --speculative-config {D3} --port $PORT\n")
    assert draft == 3
    assert any("`$PORT`" in n for n in notes)


def test_a_literal_set_after_the_source_is_still_unsettled() -> None:
    # `. ./x` may run `set --` itself: "$@" after it is not the literal parameters
    text = f'set -- --port 1\n. ./x\nvllm serve {M} --speculative-config {D3} "$@"\n'
    with pytest.raises(InputError, match=r"may be set by `\. \./x`"):
        _script(text)


# --- Compose: .env beside the file ------------------------------------------------------

COMPOSE = (
    "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
    f'    command: ["--model", "{M}", "--speculative-config", {D3}, "${{EXTRA:-}}"]\n'
)


def _compose(
    tmp_path: Path, compose: str, dotenv: str | None
) -> tuple[int | None, tuple[str, ...]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "compose.yaml").write_text(compose)
    if dotenv is not None:
        (tmp_path / ".env").write_text(dotenv)
    config = read_engine_file(tmp_path / "compose.yaml", "compose.yaml", engine="vllm")
    return config.draft_length, config.notes


def test_compose_fills_in_the_dotenv_beside_it(tmp_path: Path) -> None:
    # the reviewer's 2-compose-dotenv: Compose puts EXTRA's value in the argv item
    dotenv = (
        'EXTRA=--speculative-config={"method":"eagle3","model":"y","num_speculative_tokens":12}\n'
    )
    assert _compose(tmp_path, COMPOSE, dotenv)[0] == 12


def test_compose_without_the_variable_anywhere_refuses(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _compose(tmp_path, COMPOSE, "OTHER=1\n")
    assert caught.value.line == 4
    assert "`${EXTRA:-}`" in caught.value.reason


@pytest.mark.parametrize(
    ("dotenv", "draft"),
    [("D=12\n", 12), (None, 3), ("# nothing\n", 3), ("D=\n", 3), ("export D='7'\n", 7)],
)
def test_compose_default_inside_a_json_value(
    tmp_path: Path, dotenv: str | None, draft: int
) -> None:
    # ${D:-3}: D's value when set and not empty, else 3 (Compose interpolation reference)
    compose = (
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n    command: >-\n"
        "      vllm serve m --speculative-config\n"
        """      '{"method":"eagle3","model":"y","num_speculative_tokens":${D:-3}}'\n"""
    )
    assert _compose(tmp_path, compose, dotenv)[0] == draft


def test_compose_empty_default_no_file_settles_is_refused(tmp_path: Path) -> None:
    # ${EXTRA:-} states nothing: the environment docker compose runs in decides
    with pytest.raises(InputError, match=r"`\$\{EXTRA:-\}`: set by no \.env"):
        _compose(tmp_path, COMPOSE, None)


def test_compose_quoted_value_no_file_settles_is_a_note(tmp_path: Path) -> None:
    # an argv item is one word: as --port's value it holds no other flag
    compose = COMPOSE.replace('"${EXTRA:-}"', '"--port", "${PORT}"')
    draft, notes = _compose(tmp_path, compose, None)
    assert draft == 3
    assert any("`${PORT}`" in n for n in notes)


def test_compose_required_variable_unset_is_the_environments(tmp_path: Path) -> None:
    # Contract change (new-user trial D4): Compose stops unless the environment it runs
    # in sets EXTRA, so the value is the deployment's (SG313), no longer an input error
    # of the file. Contract change (issue 24): set empty by .env it is the deployment's
    # too, not an input error: the environment Compose runs in beats .env (docker-compose
    # 1.29.2 and Compose v2.40.3 run `${EXTRA:?msg}` with EXTRA= in .env and EXTRA set in
    # the environment: tests/integration/test_compose_interpolation_degrade.py)
    compose = COMPOSE.replace("${EXTRA:-}", "${EXTRA:?set EXTRA}")
    with pytest.raises(UnsettledValue) as raised:
        _compose(tmp_path, compose, None)
    assert (raised.value.origin, raised.value.what) == ("outside", "$EXTRA")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UnsettledValue) as raised:
        _compose(tmp_path / "empty", compose, "EXTRA=\n")
    assert (raised.value.origin, raised.value.what) == ("outside", "$EXTRA")


def test_compose_double_dollar_is_a_literal_dollar(tmp_path: Path) -> None:
    # "$$EXTRA" is the literal word $EXTRA for the engine: no flag, D stays 3
    compose = COMPOSE.replace("${EXTRA:-}", "$$EXTRA")
    assert _compose(tmp_path, compose, "EXTRA=--speculative-config=x\n")[0] == 3


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("A=plain # comment", "plain"),
        ("A=plain# not a comment", "plain# not a comment"),
        ("A='$B literal'", "$B literal"),
        ('A="x\\ty"', "x\ty"),
        ('A="{\\"hello\\": \\"json\\"}"', '{"hello": "json"}'),
        ("A=${B}-z", "b-z"),
        ('A="${B:-q} # kept" # dropped', "b # kept"),
        ("export A=1", "1"),
    ],
)
def test_dotenv_syntax(line: str, value: str) -> None:
    # examples of Docker's "Syntax for environment files" page
    assert parse_dotenv(f"B=b\n{line}\n", ".env")["A"] == value


# --- Kubernetes: $(NAME) from the container's env -----------------------------------------

K8S = (
    "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
    "        - name: v\n          image: vllm/vllm-openai:v0.11.0\n          env:\n"
    '            - name: D\n              value: "12"\n'
    "            - name: EXTRA\n              valueFrom: {configMapKeyRef: {name: c, key: x}}\n"
    '          args: ["--model", "m", "--speculative-config",\n'
    """                 '{"method":"eagle3","model":"y","num_speculative_tokens":$(D)}'ITEM]\n"""
)


def _k8s(tmp_path: Path, item: str) -> int | None:
    (tmp_path / "k.yaml").write_text(K8S.replace("ITEM", item))
    return read_engine_file(tmp_path / "k.yaml", "k.yaml", engine="vllm").draft_length


def test_kubernetes_dependent_variable_from_env(tmp_path: Path) -> None:
    # $(D) is the container's D, "12" (Kubernetes: "Define a Command and Arguments")
    assert _k8s(tmp_path, "") == 12


def test_kubernetes_variable_from_a_config_map_refuses(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _k8s(tmp_path, ', "$(EXTRA)"')
    assert caught.value.line == 15  # the args list's second line, where the item stands
    assert "`$(EXTRA)`" in caught.value.reason


def test_kubernetes_escaped_and_unknown_references_stay_literal(tmp_path: Path) -> None:
    # $$(EXTRA) is the literal $(EXTRA); $(NOPE) names no variable and stays as written:
    # the engine receives those words, no flag
    assert _k8s(tmp_path, ', "$$(EXTRA)", "$(NOPE)"') == 12
