"""A launcher call in a function its decorators only register (specgate/load/registering.py,
docs/engines.md#command-lines-and-launchers).

FastAPI's ``on_event("startup")`` returns the function unchanged and Starlette calls it
with no arguments at startup (fastapi 0.136.3 routing.py lines 4932-4956); Modal's
``modal.enter()`` keeps it as ``raw_f`` and calls it bound to the instance alone
(modal-client modal/partial_function.py, ``_find_callables_for_obj``). So the call in the
body runs as written: its literals are read. Any other decorator keeps SG312. The live
test runs the FastAPI form under fastapi itself (the vLLM CPU environment's 0.136.3),
with a stub ``vllm`` recording what ``LLM`` receives.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.integration.test_transformers_scripts_live import PYTHON
from tests.oracle.test_python_launchers import STUB

from specgate.core.errors import UnreadForm
from specgate.load.python_launcher import load_python_launcher

CALL = 'LLM(model="org/m", speculative_config={"method": "ngram", "num_speculative_tokens": 4})'

FASTAPI = f"""\
from fastapi import FastAPI
from vllm import LLM

app = FastAPI()
llm = None


@app.on_event("startup")
def load():
    global llm
    llm = {CALL}
"""

MODAL = f"""\
import modal
from vllm import LLM

app = modal.App("serve")


@app.cls(gpu="H100")
class Model:
    @modal.enter(snap=False)
    def load(self):
        self.llm = {CALL}
"""

READ = {"model": "org/m", "speculative_config": {"method": "ngram", "num_speculative_tokens": 4}}


@pytest.mark.parametrize("text", [FASTAPI, MODAL], ids=["fastapi-startup", "modal-enter"])
def test_a_call_in_a_registered_function_is_read(text: str) -> None:
    doc = load_python_launcher(text, "serve.py")
    assert doc.data == READ
    assert doc.locate(("speculative_config", "num_speculative_tokens")).line == 11


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (('"startup"', '"shutdown"'), "another event"),
        (("@app.on_event", "@my_cache\n@app.on_event"), "a decorator not known"),
        (("app = FastAPI()", "app = FastAPI()\napp = make_app()"), "app bound twice"),
        (("from fastapi import FastAPI", "from mylib import FastAPI"), "not fastapi's"),
        (("def load():", "def load(model):"), "parameters stay the caller's"),
    ],
)
def test_any_other_route_stays_sg312(change: tuple[str, str], why: str) -> None:
    text = FASTAPI.replace(*change)
    if "parameters" in why:
        text = text.replace('model="org/m"', "model=model")
        # a parameter is the caller's: the call is read, its model not settled
        doc = load_python_launcher(text, "serve.py")
        assert isinstance(doc.data, dict) and "model" not in doc.data
        return
    with pytest.raises(UnreadForm):
        load_python_launcher(text, "serve.py")


def test_modal_rebound_stays_sg312() -> None:
    with pytest.raises(UnreadForm):
        load_python_launcher(MODAL.replace("import modal\n", "import modal\nmodal = None\n"),
                             "serve.py")


@pytest.mark.skipif(PYTHON is None, reason="no interpreter with fastapi")
def test_fastapi_runs_the_startup_handler_with_the_call_as_read(tmp_path: Path) -> None:
    (tmp_path / "stubs" / "vllm").mkdir(parents=True)
    (tmp_path / "stubs" / "vllm" / "__init__.py").write_text(STUB, encoding="utf-8")
    (tmp_path / "serve.py").write_text(FASTAPI, encoding="utf-8")
    log = tmp_path / "calls.jsonl"
    driver = (
        "from fastapi.testclient import TestClient\nimport serve\n"
        "with TestClient(serve.app):\n    pass\n"
    )
    assert PYTHON is not None
    subprocess.run(
        [PYTHON, "-c", driver], check=True, timeout=120, capture_output=True, cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", ""),
             "PYTHONPATH": f"{tmp_path / 'stubs'}{os.pathsep}{tmp_path}",
             "SPECGATE_STUB_LOG": str(log)},
    )
    ran = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert ran == [READ]  # the handler ran once, with the literals specgate reads
