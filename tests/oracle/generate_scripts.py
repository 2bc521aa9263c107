"""Random hostile transformers scripts for the oracle of
:mod:`specgate.load.python_generate` (tests/oracle/test_python_generate_oracle.py).

Each script loads a tokenizer, a target and a draft, then mixes statements that may change
what its ``generate()``/pipeline call runs with: generation-config assignments under
branches, loops, functions, ``try``/``with``, class bodies and lambdas; re-bound and
aliased models; kwargs dicts and prompt lists mutated after creation; tokenizer outputs
sliced; constants that look false and are not (``"0"``, ``[0]``, ``"False"``); early
``return``/``raise``/``sys.exit``; ``setattr``/``getattr``/``globals()``/``exec``.
"""

from __future__ import annotations

import random

IMPORTS = [
    ("from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, "
     "pipeline", "AutoModelForCausalLM", "AutoTokenizer", "GenerationConfig", "pipeline"),
    ("from transformers import AutoModelForCausalLM as M, AutoTokenizer as T, "
     "GenerationConfig as GC, pipeline as P", "M", "T", "GC", "P"),
    ("import transformers", "transformers.AutoModelForCausalLM", "transformers.AutoTokenizer",
     "transformers.GenerationConfig", "transformers.pipeline"),
    ("import transformers as tf", "tf.AutoModelForCausalLM", "tf.AutoTokenizer",
     "tf.GenerationConfig", "tf.pipeline"),
]

#: conditions and whether they hold
CONDITIONS = [
    ("0", False), ("1", True), ('""', False), ('"0"', True), ('"False"', True),
    ("[]", False), ("[0]", True), ("0.0", False), ("None", False), ("()", False),
    ("(0,)", True), ("not 1", False), ("1 if 0 else 0", False), ("len([])", False),
    ("False", False), ("True", True), ('__name__ == "__main__"', True),
    ('__name__ != "__main__"', False), ("bool(0)", False), ("-0", False), ("0j", False),
    ("...", True),
]
KEYS = ["prompt_lookup_num_tokens", "num_assistant_tokens", "cache_implementation",
        "assistant_early_exit"]


def _value(rng: random.Random, key: str) -> str:
    if key == "cache_implementation":
        return rng.choice(['"static"', '"dynamic"', '"offloaded"', "None",
                           'f"{\'sta\'}tic"', '"sta" + "tic"'])
    return rng.choice([str(rng.randint(1, 9)), str(rng.randint(1, 9)), "None", "True",
                       f"{rng.randint(1, 9)} if X else {rng.randint(1, 9)}", "-0", "2 * 3",
                       "0x3", "int('4')"])


def _wrap(rng: random.Random, stmt: str, n: int) -> str:
    """``stmt`` under a random control form (n: a unique suffix)."""
    ind = "\n    "
    kind = rng.choice(["plain", "plain", "plain", "if", "ifelse", "for", "while", "try",
                       "tryexc", "with", "def_called", "def_unused", "class", "lambda",
                       "main", "walrus_if", "for_empty", "try_finally"])
    cond, _ = rng.choice(CONDITIONS)
    flat = stmt
    stmt = stmt.replace("\n", ind)
    return {
        "plain": flat,
        "if": f"if {cond}:{ind}{stmt}",
        "ifelse": f"if {cond}:{ind}pass\nelse:{ind}{stmt}",
        "for": f"for _i in range({rng.randint(0, 2)}):{ind}{stmt}",
        "for_empty": f"for _i in []:{ind}{stmt}",
        "while": f"while {cond}:{ind}{stmt}{ind}break",
        "try": f"try:{ind}{stmt}\nexcept Exception:{ind}pass",
        "tryexc": f"try:{ind}raise ValueError(){ind}{stmt}\nexcept ValueError:{ind}pass",
        "try_finally": f"try:{ind}pass\nfinally:{ind}{stmt}",
        "with": f"with contextlib.nullcontext():{ind}{stmt}",
        "def_called": f"def f{n}():{ind}global model, draft, kw, prompts, gc, inputs"
                      f"{ind}{stmt}\nf{n}()",
        "def_unused": f"def f{n}():{ind}global model, draft, kw, prompts, gc, inputs"
                      f"{ind}{stmt}",
        "class": f"class C{n}:{ind}{stmt}",
        "lambda": f"(lambda: exec({flat!r}, globals()))()",
        "main": f'if __name__ == "__main__":{ind}{stmt}',
        "walrus_if": f"if (w{n} := {cond}):{ind}{stmt}",
    }[kind]


def _statement(rng: random.Random, names: tuple[str, ...]) -> str:
    model_cls, tok_cls, gc_cls, _ = names
    who = rng.choice(["model", "draft", "model", "draft", "alias"])
    key = rng.choice(KEYS)
    kind = rng.choice(["config", "config", "config", "rebind", "kwmut", "promptmut",
                       "inputmut", "gcmut", "setattr", "getattr", "globals", "exit",
                       "del", "shadow", "update", "replace", "vars", "loop", "loop"])
    val = _value(rng, key)
    if kind == "config":
        if who == "alias":
            return f"alias = model\nalias.generation_config.{key} = {val}"
        return f"{who}.generation_config.{key} = {val}"
    if kind == "rebind":
        return rng.choice([
            f'model = {model_cls}.from_pretrained("other")',
            "draft = model", "model = draft",
            f'(draft := {model_cls}.from_pretrained("w"))',
            "model, draft = draft, model",
        ])
    if kind == "kwmut":
        return rng.choice([
            f'kw["{key}"] = {val}', f'kw.update({key}={val})', f'kw.pop("{key}", None)',
            f'kw |= {{"{key}": {val}}}', "kw.clear()", f'kw = {{"{key}": {val}}}',
            f"kw.setdefault('{key}', {val})",
        ])
    if kind == "promptmut":
        return rng.choice([
            'prompts.append("z")', 'prompts += ["y"]', "prompts = prompts[:1]",
            "prompts *= 2", "prompts.pop()", 'prompts = ["only"]', "del prompts[1:]",
            'prompts[0:0] = ["a", "b"]', "prompts.clear() if False else None",
        ])
    if kind == "inputmut":
        return rng.choice([
            'inputs["input_ids"] = inputs["input_ids"][:1]',
            "inputs = {'input_ids': inputs['input_ids'][:1]}",
            "inputs.input_ids = inputs.input_ids[:1]" if False else
            'inputs.update(input_ids=inputs["input_ids"][:1])',
            f'inputs = {tok_cls}.from_pretrained("t")(["p", "q", "r"])',
            'inputs = tok("single")',
        ])
    if kind == "gcmut":
        return rng.choice([f"gc.{key} = {val}", f"gc.update({key}={val})",
                           f"gc = {gc_cls}({key}={val})", f"setattr(gc, '{key}', {val})"])
    if kind == "setattr":
        return f"setattr({who if who != 'alias' else 'model'}.generation_config, '{key}', {val})"
    if kind == "getattr":
        return f"getattr(model, 'generation_config').{key} = {val}"
    if kind == "globals":
        return rng.choice(['globals()["draft"] = model', "globals()['kw'] = {}",
                           'exec("model.generation_config.prompt_lookup_num_tokens = 2")',
                           'eval("0")'])
    if kind == "loop":
        return rng.choice([
            f"for n in (3, 5):\n    {'model' if who == 'alias' else who}"
            f".generation_config.{key} = n",
            f"model.generation_config.{key} = {val}\nmodel.generation_config.{key} = {val}",
            f"model.generation_config.{key} += 1" if key != "cache_implementation" else
            f"model.generation_config.{key} = None",
            f"model.generation_config.{key} = draft.generation_config.{key} = {val}",
            f"cfg = model.generation_config\ncfg.{key} = {val}",
            f"lst = [model]\nlst[0].generation_config.{key} = {val}",
        ])
    if kind == "exit":
        return rng.choice(["sys.exit(0)", "raise SystemExit", "raise RuntimeError('x')"])
    if kind == "del":
        return rng.choice(["del kw", "del gc", "del prompts", "del inputs"])
    if kind == "shadow":
        return rng.choice([
            "model.generate = lambda *a, **k: None",
            f"{model_cls}.from_pretrained = staticmethod(lambda *a, **k: draft)",
            "def generate(*a, **k):\n    pass",
            "class model:\n    generate = staticmethod(lambda *a, **k: None)",
        ])
    if kind == "update":
        return f"model.generation_config.update({key}={val})"
    if kind == "replace":
        return f"{who if who != 'alias' else 'draft'}.generation_config = {gc_cls}({key}={val})"
    return f"vars(model.generation_config)['{key}'] = {val}"


def _call(rng: random.Random, names: tuple[str, ...]) -> str:
    _, _, gc_cls, _ = names
    receiver = rng.choice(["model", "model", "model", "draft"])
    inputs = rng.choice(["**inputs", "inputs.input_ids", 'inputs["input_ids"]',
                         "input_ids=inputs.input_ids", "inputs.input_ids[:1]",
                         'tok("one")["input_ids"]', "tok(prompts).input_ids",
                         'tok(["a", "b"]).input_ids.to("cpu")'])
    words = [inputs]
    for _ in range(rng.randint(0, 3)):
        key = rng.choice([*KEYS, "assistant_model", "assistant_model", "generation_config",
                          "kwargs", "star"])
        if key == "assistant_model":
            words.append("assistant_model=" + rng.choice(
                ["draft", "draft", "model", "alias", "None", "draft if X else None"]))
        elif key == "generation_config":
            words.append("generation_config=" + rng.choice(
                ["gc", f"{gc_cls}({rng.choice(KEYS)}={_value(rng, 'x')})", "None"]))
        elif key == "kwargs":
            words.append(rng.choice(["**kw", "**{'prompt_lookup_num_tokens': 3}",
                                     "**dict(prompt_lookup_num_tokens=4)"]))
        elif key == "star":
            words.append("*extra")
        else:
            words.append(f"{key}={_value(rng, key)}")
    seen: set[str] = set()
    unique = []
    for word in words:
        head = word.split("=")[0] if "=" in word and not word.startswith("**") else word
        if head not in seen:
            seen.add(head)
            unique.append(word)
    positional = [w for w in unique if not ("=" in w and not w.startswith("*"))
                  and not w.startswith("**")]
    rest = [w for w in unique if w not in positional]
    return f"{receiver}.generate({', '.join(positional + rest)})"


def _pipe_call(rng: random.Random, names: tuple[str, ...]) -> str:
    pipe_fn = names[3]
    made = (f'pipe = {pipe_fn}("text-generation", model=' + rng.choice(['"target"', "model"])
            + ", assistant_model=" + rng.choice(['"draft"', "draft", "None"])
            + rng.choice(["", ", batch_size=2", ", batch_size=1", ", batch_size=B"]) + ")")
    call = "out = pipe(" + rng.choice(['"one"', "prompts", '["a", "b", "c"]']) + rng.choice(
        ["", ", batch_size=3", ", prompt_lookup_num_tokens=3", ", **kw"]) + ")"
    return made + "\n" + call


def script(rng: random.Random) -> str:
    """One random transformers script."""
    imp, model_cls, tok_cls, gc_cls, pipe_fn = rng.choice(IMPORTS)
    names = (model_cls, tok_cls, gc_cls, pipe_fn)
    head = [
        "import contextlib, sys",
        imp,
        f"X = {rng.choice(['0', '1', 'sys.argv[0]', '[]'])}",
        f"B = {rng.randint(1, 4)}",
        f'tok = {tok_cls}.from_pretrained("tok")',
        f'model = {model_cls}.from_pretrained("target")',
        f'draft = {model_cls}.from_pretrained("draft")',
        "alias = draft",
        "extra = ()",
        f'kw = {{"{rng.choice(KEYS)}": {rng.randint(1, 9)}}}',
        f"gc = {gc_cls}({rng.choice(KEYS)}={rng.randint(1, 9)})",
        "prompts = " + rng.choice(['["a", "b"]', '["a"]', '["a", "b", "c", "d"]', '"one"']),
        "inputs = tok(prompts, return_tensors='pt')",
    ]
    body = [_wrap(rng, _statement(rng, names), n) for n in range(rng.randint(0, 4))]
    call = _pipe_call(rng, names) if rng.random() < 0.2 else "out = " + _call(rng, names)
    place = rng.choice(["top", "top", "main_guard", "main_fn", "fn_unused", "after"])
    if place == "top":
        tail = [*body, call]
    elif place == "after":
        tail = [call, *body, "out = " + _call(rng, names)]
    else:
        ind = "\n    "
        inner = ind + "\n".join([*body, call]).replace("\n", ind)
        if place == "main_fn" and rng.random() < 0.3:
            cond, _ = rng.choice(CONDITIONS)
            inner = f"{ind}if {cond}:{ind}    return" + inner
        if place == "main_guard":
            tail = [f'if __name__ == "__main__":{inner}']
        else:
            glob = f"{ind}global model, draft, kw, prompts, gc, inputs, pipe"
            tail = [f"def main():{glob}{inner}"]
            if place == "main_fn":
                tail.append('if __name__ == "__main__":\n    main()')
    return "\n".join(head + tail) + "\n"
