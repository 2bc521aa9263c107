"""The Dockerfile reader's own rules, each worked by hand from the Dockerfile reference
(docs.docker.com/reference/dockerfile/: "Environment replacement", "Understand how ARG and
FROM interact") and BuildKit's parser (moby/buildkit frontend/dockerfile/parser/parser.go
@ca4838f8: ``lineContinuationRegex`` ``([^\\\\])\\\\[ \\t]*$|^\\\\[ \\t]*$``, continuation lines
joined as they are, comment and empty lines inside dropped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from specgate.inputs import dockerfile as df


def test_lines_join_as_buildkit_joins_them() -> None:
    text = (
        "FROM a\n"
        "RUN one \\\n  # dropped\n\n  two\\\n three\n"
        "RUN ends-with-escaped \\\\\n"  # \\ at the end: not a continuation
        "RUN <<EOF\nline1\nEOF\n"
        "ENV A=1\n"
    )
    got = [(i.line, i.keyword, i.rest, i.heredoc) for i in df.instructions(text)]
    assert got == [
        (1, "FROM", "a", ""),
        (2, "RUN", "one   two three", ""),
        (7, "RUN", "ends-with-escaped \\\\", ""),
        (8, "RUN", "<<EOF", "line1"),
        (11, "ENV", "A=1", ""),
    ]


@pytest.mark.parametrize(
    ("text", "scope", "out"),
    [
        ("x${A}y$A", {"A": "1"}, "x1y1"),
        ("${A:-w}", {"A": ""}, "w"),
        ("${A:-w}", {"A": None}, "w"),  # an ARG with no value: the word
        ("${A:+w}", {"A": "1"}, "w"),
        ("${A:+w}", {"A": ""}, ""),
        ("\\$A", {"A": "1"}, "$A"),  # an escaped $ is kept
    ],
)
def test_expansion(text: str, scope: dict[str, str | None], out: str) -> None:
    assert df.expand(text, scope) == out


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("$A", {"A": None}),  # no value
        ("$B", {}),  # not set in the Dockerfile: the base image's ENV may
        ("${A%x}", {"A": "1"}),  # another form
        ("${A:-${B}}", {"A": "", "B": "1"}),  # nested
        ("$A", {"A": df.UNSET}),
        ("${A:-w}", {"A": df.UNSET}),  # from the environment: even a default does not hold
    ],
)
def test_unsettled_expansion(text: str, scope: dict[str, str | None]) -> None:
    with pytest.raises(df.Unsettled):
        df.expand(text, scope)


def test_arg_scopes(tmp_path: Path) -> None:
    text = (
        "ARG G=1\nARG H\n"
        "FROM base:$G AS one\nARG G\nARG H\nARG L=local\nENV L=env\n"
        "RUN r\n"
        "FROM one\nRUN s\n"
    )
    stages, glob = df.stages(text, {"H": "fromargs"}, tmp_path)
    assert (glob["G"], glob["H"]) == ("1", "fromargs")
    first, second = stages
    run = first.runs[0]
    # in-stage valueless ARGs take the global values; ENV beats the ARG of the same name
    assert (run.scope["G"], run.scope["H"], run.scope["L"]) == ("1", "fromargs", "env")
    # the continuing stage keeps ENV and the earlier RUN lines, not the ARGs
    assert [r.line for r in second.runs] == [8, 10]
    assert "G" not in second.runs[1].scope and second.runs[1].scope["L"] == "env"
    assert df.base_image(stages, second, glob) == "base:1"
