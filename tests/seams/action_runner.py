"""Run a composite ``action.yml`` offline, the way the GitHub Actions runner runs it.

What is mimicked (ecosystem.md docs/theory.md#vocabulary, docs/claims-file.md#format-rules,
README.md#github-action, and the runner's behaviour):

- each ``run:`` step is written to a file and run with ``bash --noprofile --norc -eo
  pipefail FILE`` (the runner's template for ``shell: bash``), in ``$GITHUB_WORKSPACE``
  joined with the step's ``working-directory``;
- the step's ``env:`` (and ``with:``, ``if:``, ``working-directory``, the action's
  ``outputs``) are evaluated by a tiny expression evaluator that knows only what
  specgate's action.yml uses: ``inputs.X``, ``steps.ID.outputs.Y``, ``runner.temp``,
  string literals, ``true``/``false``, ``==``, ``!=``, ``!``, ``&&``, ``||`` and
  parentheses; anything else raises :class:`UnsupportedExpression`;
- each step gets fresh ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_ENV`` and
  ``GITHUB_PATH`` files; ``GITHUB_OUTPUT`` is parsed with the runner's rules (``name=value``
  or a ``name<<DELIM`` heredoc, whichever of ``=`` and ``<<`` comes first);
- a step runs only if every earlier step succeeded (the implicit ``success()``) and its
  ``if:`` is true;
- ``uses:`` steps are replaced: ``actions/setup-python`` gives a ``python-path`` output
  pointing at a local interpreter; ``github/codeql-action/upload-sarif`` is skipped and its
  evaluated ``with:`` recorded; ``actions/cache`` reports a hit when an earlier run of
  this runner finished with that key and its ``path`` is still there (the restore), and
  a run that succeeds records its keys (the post-step save). All must be pinned by a
  full commit SHA.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from support.runner_parser import ParsedCommand, parse_output

__all__ = [
    "ActionRun",
    "ActionRunner",
    "Context",
    "StepResult",
    "UnsupportedExpression",
    "evaluate",
    "parse_file_command",
    "substitute",
]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_TEMPLATE = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.-]*))"
)
_SHA_PIN = re.compile(r"[0-9a-f]{40}")
ANNOTATION_COMMANDS = frozenset({"error", "warning", "notice"})

Value = str | bool


class UnsupportedExpression(AssertionError):
    """An expression this evaluator does not implement (so the test cannot vouch for it)."""


@dataclass
class Context:
    """What expressions can read: inputs, earlier steps' outputs, the runner temp dir."""

    inputs: Mapping[str, str]
    steps: Mapping[str, Mapping[str, str]]
    runner_temp: str
    #: ``github.action_repository`` and ``github.action_ref``: filled in a composite
    #: action's ``env`` (GitHub's contexts reference), while the runner leaves
    #: $GITHUB_ACTION_REPOSITORY and $GITHUB_ACTION_REF empty in its ``run``
    #: (actions/runner#2473), so the runner here never sets those variables.
    action: tuple[str, str] = ("", "")

    def lookup(self, name: str) -> str:
        parts = name.split(".")
        if len(parts) == 2 and parts[0] == "inputs":
            if parts[1] not in self.inputs:
                raise UnsupportedExpression(f"input {parts[1]!r} is not declared")
            return self.inputs[parts[1]]
        if len(parts) == 4 and parts[0] == "steps" and parts[2] == "outputs":
            if parts[1] not in self.steps:
                raise UnsupportedExpression(f"step {parts[1]!r} has not run before this use")
            return self.steps[parts[1]].get(parts[3], "")
        if name == "runner.temp":
            return self.runner_temp
        if name == "github.action_repository":
            return self.action[0]
        if name == "github.action_ref":
            return self.action[1]
        raise UnsupportedExpression(f"context {name!r} is not supported by the test runner")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise UnsupportedExpression(f"cannot read {text[position:]!r} in {text!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _truthy(value: Value) -> bool:
    return value if isinstance(value, bool) else value != ""


class _Parser:
    def __init__(self, text: str, context: Context) -> None:
        self.tokens = _tokens(text)
        self.index = 0
        self.context = context
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise UnsupportedExpression(f"unexpected end of {self.text!r}")
        self.index += 1
        return token

    def parse(self) -> Value:
        value = self.or_()
        if self.peek() is not None:
            raise UnsupportedExpression(f"unexpected {self.peek()!r} in {self.text!r}")
        return value

    def or_(self) -> Value:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if _truthy(value) else right
        return value

    def and_(self) -> Value:
        value = self.compare()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.compare()
            value = right if _truthy(value) else value
        return value

    def compare(self) -> Value:
        left = self.unary()
        token = self.peek()
        if token in (("op", "=="), ("op", "!=")):
            self.take()
            right = self.unary()
            if not (isinstance(left, str) and isinstance(right, str)):
                raise UnsupportedExpression(f"only string comparisons: {self.text!r}")
            equal = left.casefold() == right.casefold()  # GitHub compares ignoring case
            return equal if token == ("op", "==") else not equal
        return left

    def unary(self) -> Value:
        kind, text = self.take()
        if (kind, text) == ("op", "!"):
            return not _truthy(self.unary())
        if (kind, text) == ("op", "("):
            value = self.or_()
            if self.take() != ("op", ")"):
                raise UnsupportedExpression(f"unbalanced parentheses in {self.text!r}")
            return value
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "name":
            if self.peek() == ("op", "("):
                raise UnsupportedExpression(f"function {text}() is not supported")
            if text in ("true", "false"):
                return text == "true"
            return self.context.lookup(text)
        raise UnsupportedExpression(f"unexpected {text!r} in {self.text!r}")


def evaluate(expression: str, context: Context) -> Value:
    """Evaluate one expression (without the ``${{ }}``)."""
    return _Parser(expression, context).parse()


def _as_string(value: Value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else value


def substitute(text: Any, context: Context) -> str:
    """A YAML scalar with every ``${{ expr }}`` replaced by its string value."""
    if isinstance(text, bool):
        return "true" if text else "false"
    if not isinstance(text, str):
        return str(text)
    return _TEMPLATE.sub(lambda m: _as_string(evaluate(m.group(1), context)), text)


def condition(text: Any, context: Context) -> bool:
    """An ``if:`` value (bare or wrapped in ``${{ }}``) as a boolean."""
    if isinstance(text, bool):
        return text
    stripped = str(text).strip()
    whole = _TEMPLATE.fullmatch(stripped)
    return _truthy(evaluate(whole.group(1) if whole else stripped, context))


def parse_file_command(text: str) -> dict[str, str]:
    """``GITHUB_OUTPUT`` as the runner reads it (``FileCommandManager``,
    ``EnvFileKeyValuePairs``); raises ``ValueError`` where the runner reports an error."""
    lines = _LINE_BREAK.split(text)
    values: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        equals, heredoc = line.find("="), line.find("<<")
        if equals >= 0 and (heredoc < 0 or equals < heredoc):
            name, value = line[:equals], line[equals + 1 :]
        elif heredoc >= 0:
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            if not delimiter:
                raise ValueError(f"empty delimiter in {line!r}")
            collected: list[str] = []
            while True:
                if index >= len(lines):
                    raise ValueError(f"Matching delimiter not found {delimiter!r}")
                body = lines[index]
                index += 1
                if body == delimiter:
                    break
                collected.append(body)
            value = "\n".join(collected)
        else:
            raise ValueError(f"invalid format {line!r}")
        if not name:
            raise ValueError(f"empty name in {line!r}")
        values[name] = value
    return values


@dataclass
class StepResult:
    """One step of a run."""

    id: str | None
    name: str
    ran: bool
    returncode: int | None = None  # None: a replaced `uses:` step, or not run
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    env_file: str = ""  # what the step wrote to GITHUB_ENV and GITHUB_PATH
    uses: str | None = None
    with_: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)  # the step's evaluated `env:`

    @property
    def failed(self) -> bool:
        return self.returncode not in (None, 0)


@dataclass
class ActionRun:
    """A whole run of the action: its steps in order, and the action's outputs."""

    steps: list[StepResult]
    outputs: dict[str, str]

    @property
    def failed(self) -> bool:
        """Whether the job would be marked failed."""
        return any(step.failed for step in self.steps)

    def step(self, key: str) -> StepResult:
        """The step with this id (or, failing that, this name)."""
        for step in self.steps:
            if key in (step.id, step.name):
                return step
        raise KeyError(key)

    @property
    def summary(self) -> str:
        """The job summary: every step's summary, in order."""
        return "".join(step.summary for step in self.steps)

    def annotations(self, level: str | None = None) -> list[ParsedCommand]:
        """Annotation commands on the steps' stdout, parsed as the runner parses them."""
        found: list[ParsedCommand] = []
        for step in self.steps:
            for item in parse_output(step.stdout):
                if (
                    isinstance(item, ParsedCommand)
                    and item.command in ANNOTATION_COMMANDS
                    and (level is None or item.command == level)
                ):
                    found.append(item)
        return found


def _pinned(uses: str) -> tuple[str, str]:
    action, _, ref = uses.partition("@")
    if not _SHA_PIN.fullmatch(ref):
        raise AssertionError(f"{uses!r} is not pinned by a full commit SHA")
    return action, ref


class ActionRunner:
    """Runs the composite action in ``action_path`` (its ``action.yml``)."""

    def __init__(
        self,
        action_path: Path,
        runner_temp: Path,
        *,
        python: str,
        base_env: Mapping[str, str],
        action: tuple[str, str] = ("", ""),
    ) -> None:
        self.action_path = action_path
        self.action_ref = action
        self.action: dict[str, Any] = yaml.safe_load(
            (action_path / "action.yml").read_text(encoding="utf-8")
        )
        assert self.action["runs"]["using"] == "composite"
        self.runner_temp = runner_temp
        self.python = python
        self.base_env = dict(base_env)
        self.saved_cache_keys: set[str] = set()
        self._pending_cache_keys: set[str] = set()

    def inputs(self, given: Mapping[str, str]) -> dict[str, str]:
        """``given`` over the declared defaults; an undeclared input is an error."""
        declared: dict[str, Any] = self.action.get("inputs", {})
        unknown = set(given) - set(declared)
        if unknown:
            raise AssertionError(f"inputs not declared in action.yml: {sorted(unknown)}")
        values = {
            name: substitute(spec.get("default", ""), _NO_CONTEXT)
            for name, spec in declared.items()
        }
        values.update(given)
        return values

    def run(
        self,
        workspace: Path,
        inputs: Mapping[str, str] | None = None,
        *,
        reuse: Mapping[str, StepResult] | None = None,
    ) -> ActionRun:
        """Run every step; steps whose id is in ``reuse`` are not run again, their
        earlier results (and outputs) are used instead."""
        values = self.inputs(inputs or {})
        step_outputs: dict[str, dict[str, str]] = {}
        results: list[StepResult] = []
        for number, step in enumerate(self.action["runs"]["steps"]):
            context = Context(values, step_outputs, str(self.runner_temp), self.action_ref)
            step_id = step.get("id")
            name = step.get("name", step_id or f"step {number}")
            if reuse and step_id in reuse:
                result = reuse[step_id]
            elif any(r.failed for r in results) or not condition(step.get("if", True), context):
                result = StepResult(step_id, name, ran=False)
            elif "uses" in step:
                result = self._uses(
                    step=step, step_id=step_id, name=name, context=context, inputs=values
                )
            else:
                result = self._run(
                    step=step,
                    step_id=step_id,
                    name=name,
                    context=context,
                    workspace=workspace,
                    number=number,
                )
            results.append(result)
            if step_id:
                step_outputs[step_id] = result.outputs
        if not any(r.failed for r in results):
            self.saved_cache_keys |= self._pending_cache_keys
        self._pending_cache_keys = set()
        final = Context(values, step_outputs, str(self.runner_temp))
        outputs = {
            name: substitute(spec["value"], final)
            for name, spec in self.action.get("outputs", {}).items()
        }
        return ActionRun(results, outputs)

    def _uses(
        self,
        *,
        step: Mapping[str, Any],
        step_id: str | None,
        name: str,
        context: Context,
        inputs: Mapping[str, str],
    ) -> StepResult:
        action, _ = _pinned(step["uses"])
        with_ = {key: substitute(value, context) for key, value in step.get("with", {}).items()}
        result = StepResult(step_id, name, ran=True, uses=step["uses"], with_=with_)
        if action == "actions/setup-python":
            assert with_.get("update-environment") == "false", "setup-python must not touch PATH"
            assert with_.get("python-version") == inputs["python-version"]
            result.outputs = {
                "python-path": self.python,
                "python-version": platform.python_version(),
            }
        elif action == "github/codeql-action/upload-sarif":
            pass  # not uploaded: the test asserts `with_`
        elif action == "astral-sh/setup-uv":
            assert re.fullmatch(r"\d+\.\d+\.\d+", with_.get("version", "")), "uv pinned exactly"
            assert with_.get("enable-cache") == "false", "no uv cache shared between runs"
            assert with_.get("add-problem-matchers") == "false"
            # setup-uv puts uv on PATH: the uv installed beside this interpreter, if any
            # (the test extra has it), else none and the install step uses pip
            found = shutil.which("uv", path=str(Path(sys.executable).parent))
            if found is not None:
                path = f"{Path(found).parent}{os.pathsep}{self.base_env.get('PATH', os.defpath)}"
                self.base_env = {**self.base_env, "PATH": path}
        elif action == "actions/cache":
            key, path = with_["key"], Path(with_["path"])
            assert key and path.is_absolute(), "the cache needs a key and an absolute path"
            hit = key in self.saved_cache_keys and path.exists()
            result.outputs = {"cache-hit": "true" if hit else "false"}
            if not hit:
                self._pending_cache_keys.add(key)
        else:
            raise AssertionError(f"no stand-in for {action!r}")
        return result

    def _run(
        self,
        *,
        step: Mapping[str, Any],
        step_id: str | None,
        name: str,
        context: Context,
        workspace: Path,
        number: int,
    ) -> StepResult:
        if step.get("shell") != "bash":
            raise AssertionError(f"step {name!r}: only `shell: bash` is supported")
        files = self.runner_temp / "_runner_file_commands" / uuid.uuid4().hex
        files.mkdir(parents=True)
        paths = {
            key: files / key.lower()
            for key in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")
        }
        for path in paths.values():
            path.touch()
        script = files / f"step-{number}.sh"
        script.write_text(step["run"], encoding="utf-8")
        step_env = {key: substitute(value, context) for key, value in step.get("env", {}).items()}
        cwd = workspace
        if "working-directory" in step:
            cwd = workspace / substitute(step["working-directory"], context)
        env = {
            **self.base_env,
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "RUNNER_OS": "Linux",
            "RUNNER_TEMP": str(self.runner_temp),
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_ACTION_PATH": str(self.action_path),
            **{key: str(path) for key, path in paths.items()},
            **step_env,
        }
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=False,
        )
        return StepResult(
            step_id,
            name,
            ran=True,
            returncode=done.returncode,
            stdout=done.stdout,
            stderr=done.stderr,
            outputs=parse_file_command(paths["GITHUB_OUTPUT"].read_text(encoding="utf-8")),
            summary=paths["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"),
            env_file=paths["GITHUB_ENV"].read_text(encoding="utf-8")
            + paths["GITHUB_PATH"].read_text(encoding="utf-8"),
            cwd=cwd,
            env=step_env,
        )


_NO_CONTEXT = Context({}, {}, os.devnull)
