"""Shell splitting and argparse-style flag parsing (expected values follow POSIX sh
word rules and cpython argparse behaviour, worked by hand)."""

from __future__ import annotations

import pytest

from specgate.core.errors import InputError
from specgate.inputs.cmdline import FlagSpec, parse_flags, resolve_flag, split_commands

SPEC = FlagSpec(
    known={
        "--speculative-algorithm": True,
        "--speculative-draft-model-path": True,
        "--speculative-num-steps": True,
        "--speculative-num-draft-tokens": True,
        "--mem-fraction-static": True,
        "--enable-dp-attention": False,
        "--tp-size": True,
    },
    aliases={"--tensor-parallel-size": "--tp-size", "-md": "--speculative-draft-model-path"},
    allow_abbrev=True,
)


def test_quotes_and_json_word() -> None:
    [cmd] = split_commands(
        """vllm serve m --speculative-config '{"method": "eagle3"}' --x "a b" """
    )
    assert cmd.argv == (
        "vllm",
        "serve",
        "m",
        "--speculative-config",
        '{"method": "eagle3"}',
        "--x",
        "a b",
    )


def test_continuations_give_each_word_its_line_and_column() -> None:
    text = "python -m sglang.launch_server \\\n  --tp 8 \\\n  --speculative-algo EAGLE\n"
    [cmd] = split_commands(text)
    assert cmd.argv[3:] == ("--tp", "8", "--speculative-algo", "EAGLE")
    # "--tp" is on line index 1 at column 3; "EAGLE" on line index 2 at column 22.
    assert cmd.lines[3] == 1
    assert cmd.columns[3] == 3
    assert cmd.lines[6] == 2
    assert cmd.columns[6] == 22


def test_crlf_continuations() -> None:
    [cmd] = split_commands("run \\\r\n --a 1\r\n")
    assert cmd.argv == ("run", "--a", "1")
    assert cmd.lines == (0, 1, 1)


def test_dollar_prompt_and_env_assignments() -> None:
    [cmd] = split_commands("$ SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --tp 2")
    assert cmd.argv[0] == "python"
    assert cmd.env == {"SGLANG_ENABLE_SPEC_V2": "1"}


def test_export_feeds_later_commands_and_operators_split() -> None:
    cmds = split_commands("export A=1 B=2\npip install x && serve --k 3; echo done | tee log")
    assert [c.argv[0] for c in cmds] == ["pip", "serve", "echo", "tee"]
    assert cmds[1].env == {"A": "1", "B": "2"}


def test_placeholders_stay_words() -> None:
    [cmd] = split_commands("serve --attention-backend {attention_backend} --n {n}")
    assert cmd.argv == ("serve", "--attention-backend", "{attention_backend}", "--n", "{n}")


def test_yaml_folded_lone_backslash_is_a_continuation() -> None:
    # What YAML makes of a plain scalar with trailing "\" continuations.
    [cmd] = split_commands("python3 -m x \\ --speculative-num-steps 3 \\ --tp 1")
    assert cmd.argv == ("python3", "-m", "x", "--speculative-num-steps", "3", "--tp", "1")


def test_comments_are_dropped_per_line() -> None:
    cmds = split_commands("serve --a 1  # --b 2\n# whole line\nother --c 3")
    assert [c.argv for c in cmds] == [("serve", "--a", "1"), ("other", "--c", "3")]


def test_quoted_value_spanning_lines() -> None:
    [cmd] = split_commands("serve --cfg '{\"a\":\n 1}' --b 2")
    assert cmd.argv == ("serve", "--cfg", '{"a":\n 1}', "--b", "2")
    assert cmd.lines[-1] == 1


def test_unbalanced_quote_is_an_input_error() -> None:
    with pytest.raises(InputError, match="cannot split command line") as err:
        split_commands("serve --x 'oops", file="f.txt", line=4)
    assert err.value.file == "f.txt"
    assert err.value.line == 4


def test_flag_forms() -> None:
    argv = [
        "prog",
        "--speculative-algorithm",
        "EAGLE",
        "--speculative-num-steps=3",
        "--enable-dp-attention",
        "--unknown",
        "v",
        "-md",
        "draft",
        "--tp-size",
        "2",
    ]
    flags = parse_flags(argv, SPEC)
    assert flags["--speculative-algorithm"].value == "EAGLE"
    assert flags["--speculative-num-steps"].value == "3"
    assert flags["--enable-dp-attention"].value is None
    assert flags["--speculative-draft-model-path"].value == "draft"
    assert flags["--speculative-draft-model-path"].spelled == "-md"
    assert flags["--tp-size"].value == "2"
    assert "--unknown" not in flags


def test_last_repeated_flag_wins() -> None:
    flags = parse_flags(["--speculative-num-steps", "3", "--speculative-num-steps", "5"], SPEC)
    assert flags["--speculative-num-steps"].value == "5"
    assert flags["--speculative-num-steps"].index == 2


def test_unique_abbreviations_resolve() -> None:
    assert resolve_flag("--speculative-algo", SPEC) == "--speculative-algorithm"
    assert resolve_flag("--speculative-draft", SPEC) == "--speculative-draft-model-path"
    assert resolve_flag("--mem-fraction", SPEC) == "--mem-fraction-static"
    # an abbreviation of an alias resolves to the alias's flag
    assert resolve_flag("--tensor-par", SPEC) == "--tp-size"
    assert resolve_flag("--tp", SPEC) == "--tp-size"


def test_ambiguous_abbreviation_is_an_input_error() -> None:
    with pytest.raises(InputError, match="ambiguous option: --speculative-num could match") as e:
        parse_flags(["--speculative-num", "3"], SPEC, file="cmd.txt", line=1)
    assert "--speculative-num-draft-tokens" in str(e.value)
    assert "--speculative-num-steps" in str(e.value)


def test_no_abbreviations_without_allow_abbrev() -> None:
    exact = FlagSpec({"--draft-max": True})
    assert resolve_flag("--draft", exact) is None
    assert parse_flags(["--draft", "8"], exact) == {}


def test_underscore_spelling_when_the_engine_accepts_it() -> None:
    spec = FlagSpec({"--speculative-config": True}, underscores=True)
    flags = parse_flags(["--speculative_config", "{}"], spec)
    assert flags["--speculative-config"].value == "{}"


def test_missing_value_is_kept_as_missing() -> None:
    # argparse refuses it ("expected one argument"); the parse keeps it for the reader,
    # which makes it SG307 on the deployment (docs/engines.md#refused-values), not exit 2
    flag = parse_flags(["--speculative-num-steps"], SPEC)["--speculative-num-steps"]
    assert (flag.value, flag.missing, flag.index) == (None, True, 0)
    # a shell operator next is no value either
    flag = parse_flags(["--speculative-num-steps", "&&", "x"], SPEC)["--speculative-num-steps"]
    assert flag.missing


def test_negative_number_is_not_a_flag() -> None:
    flags = parse_flags(["--speculative-num-steps", "-1"], SPEC)
    assert flags["--speculative-num-steps"].value == "-1"


def test_line_starting_with_a_flag_continues_the_command() -> None:
    cmds = split_commands("llama-server -m t.gguf\n  --draft-max 8\nother")
    assert [c.argv for c in cmds] == [
        ("llama-server", "-m", "t.gguf", "--draft-max", "8"),
        ("other",),
    ]
    assert cmds[0].lines == (0, 0, 0, 1, 1)


def test_assignments_keep_where_they_were_written() -> None:
    # 0-based line and 1-based column of each NAME=value word (export or prefix)
    (command,) = split_commands("export A=1 B=2\n  C=3 prog --x\n")
    assert command.env == {"A": "1", "B": "2", "C": "3"}
    assert command.env_at == {"A": (0, 8), "B": (0, 12), "C": (1, 3)}


def test_each_command_sees_the_exports_made_before_it() -> None:
    # commands share the exports (no copy per command) but each sees only earlier ones
    first, second, third = split_commands("export A=1\nx\nexport A=2 B=3\nC=4 y\nexport B=5\nz\n")
    assert dict(first.env) == {"A": "1"}
    assert dict(second.env) == {"C": "4", "A": "2", "B": "3"}
    assert dict(third.env) == {"A": "2", "B": "5"}
    assert third.env_at == {"A": (2, 8), "B": (4, 8)}
    assert "C" not in third.env and len(second.env) == 3


def test_words_after_a_double_dash_are_never_flags() -> None:
    # argparse and click end option parsing at "--": "--speculative-num-steps" there is
    # a positional word (vllm serve -- --config v.yaml names no config file)
    argv = ["serve", "--speculative-num-steps", "3", "--", "--speculative-num-steps", "9"]
    flags = parse_flags(argv, SPEC)
    assert flags["--speculative-num-steps"].value == "3"
    assert flags["--speculative-num-steps"].index == 1


def test_shell_variables_set_earlier_are_expanded_in_later_words() -> None:
    # real-configs review: `MODEL=…` then `vllm serve $MODEL --tensor-parallel-size $TP`
    # gave target_model "$MODEL" and an input error for "$TP"
    text = (
        "MODEL=/models/qwen.gguf\nTP=8\nexport DIR=/m\nDRAFT=$DIR/d.gguf\n"
        "vllm serve $MODEL --tensor-parallel-size ${TP} -md $DRAFT --x=$NOPE\n"
    )
    (command,) = split_commands(text)
    assert command.argv == (
        "vllm", "serve", "/models/qwen.gguf", "--tensor-parallel-size", "8",
        "-md", "/m/d.gguf", "--x=$NOPE",
    )
    # plain assignments are shell variables, not the command's environment
    assert dict(command.env) == {"DIR": "/m"}


def test_a_prefix_assignment_does_not_expand_its_own_command() -> None:
    (command,) = split_commands("X=1 echo $X\n")  # the shell expands before it assigns
    assert command.argv == ("echo", "$X")


def test_expansion_is_bounded_by_the_text() -> None:
    # a 100 kB value named 1,000 times would add 100 MB: past the text's length plus
    # 64 KiB the text is refused at the word's line (hostile review defect 2: words
    # left as written were a different reading, never said)
    from specgate.core.errors import LimitReached

    value = "v" * 100_000
    text = f"V={value}\necho " + " ".join(["$V"] * 1000) + "\n"
    with pytest.raises(LimitReached, match="budget of 168,544 characters") as caught:
        split_commands(text, file="serve.sh", line=1)
    # the text is 100,003 + 5 + 2,999 + 1 = 103,008 characters, + 65,536: the value
    # fits once; the second $V is on line 2
    assert caught.value.file == "serve.sh" and caught.value.line == 2


def test_the_expansion_budget_is_per_file_not_per_string() -> None:
    # Issue 18: each command string of a Compose file had its own budget (its length plus
    # 64 KiB), so a 1 MB file of many small commands expanded to 25 times its size. Now
    # the strings of one file share one budget: the file's length plus 64 KiB.
    from specgate.core.errors import LimitReached
    from specgate.core.limits import EXPANSION_ALLOWANCE, file_budget

    value = "v" * 1000
    texts = [f"X={value}; vllm serve m{i} " + " ".join(["--x $X"] * 100) for i in range(200)]
    size = sum(map(len, texts))  # 200 strings of ~1.7 kB: 340 kB, each asking for 100 kB
    added = 0
    read = 0

    def split_all() -> None:
        nonlocal added, read
        for text in texts:
            for command in split_commands(text):
                added += sum(len(w) for w in command.argv if w == value)
            read += 1

    with file_budget(size) as budget, pytest.raises(LimitReached):
        split_all()
    assert added <= size + EXPANSION_ALLOWANCE  # not 200 × 100 kB = 20 MB
    assert budget.chars < 1000  # spent: no further value fits
    # (size + 65,536) / 100,000 per string: the fourth string reaches the bound
    assert read == (size + EXPANSION_ALLOWANCE) // 100_000
    # a string read alone (no file being read) still has a budget of its own
    (command,) = split_commands(texts[0].split("; ", 1)[0] + "\necho $X\n")
    assert command.argv[-1] == value
