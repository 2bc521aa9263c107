"""Where a transformers script's unsettled speculative value is set (new-user trial defect
3; docs/engines.md#unsettled-values): every site the reader cannot settle is an
:class:`UnsettledValue` whose origin is :mod:`specgate.load.python_values`' (the
environment or ``sys.argv``: outside; anything the file computes: the repository), worked
by hand from Python's semantics, never an exit-2 input error."""

from __future__ import annotations

import pytest

from specgate.core.errors import UnsettledValue
from specgate.load.python_generate import load_transformers_script

HEAD = (
    "import os\nimport sys\n"
    "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
    'tok = AutoTokenizer.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.1-8B-Instruct")\n'
    'draft = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")\n'
)  # lines 1-6
GEN = 'model.generate(tok("x").input_ids, assistant_model=draft{})\n'


def unsettled(body: str) -> UnsettledValue:
    with pytest.raises(UnsettledValue) as caught:
        load_transformers_script(HEAD + body, "s.py")
    return caught.value


@pytest.mark.parametrize(
    ("body", "origin", "what", "source", "line"),
    [
        # the script's second argument (IndexError when the caller passes none)
        (GEN.format(", num_assistant_tokens=int(sys.argv[2])"), "outside", "sys.argv[2]", "", 7),
        # a name bound once at top level to an environment read: named with its read
        ("K = int(os.environ['K'])\n" + GEN.format(", num_assistant_tokens=K"),
         "outside", "K", "os.environ['K'], s.py:7", 8),
        # the assistant's config field set once, before generate(), from the environment
        ("draft.generation_config.num_assistant_tokens = int(os.getenv('K'))\n" + GEN.format(""),
         "outside", "os.getenv('K')", "", 7),
        # computed by a call the file makes
        ("def k():\n    return 5\n" + GEN.format(", num_assistant_tokens=k()"),
         "repository", "k()", "", 9),
        # exec may run any code, so which generate() runs is the repository's
        ('exec(open("more.py").read())\n' + GEN.format(""), "repository", "exec(...)", "", 7),
        # an assistant that may be None (a call's result): whether one runs is the file's
        ("def pick():\n    return None\n"
         'model.generate(tok("x").input_ids, assistant_model=pick())\n',
         "repository", "pick()", "", 9),
        # the config changed by a route no field assignment shows
        ("draft.generation_config.num_assistant_tokens = 5\n"
         "draft.generation_config.update(num_assistant_tokens=9)\n" + GEN.format(""),
         "repository", "draft.generation_config", "", 8),
    ],
)
def test_the_origin_of_an_unsettled_value(
    body: str, origin: str, what: str, source: str, line: int
) -> None:
    exc = unsettled(body)
    assert (exc.origin, exc.what, exc.source, exc.line) == (origin, what, source, line)
    assert "state the mechanism and D" not in exc.reason


def test_a_default_the_script_writes_is_read() -> None:
    # os.getenv('K', '4') with no K set is '4'; int('4') = 4
    doc = load_transformers_script(
        HEAD + GEN.format(", num_assistant_tokens=int(os.getenv('K', '4'))"), "s.py"
    )
    assert doc is not None and isinstance(doc.data, dict)
    assert doc.data["num_assistant_tokens"] == 4
