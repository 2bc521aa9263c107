"""A stub ``transformers`` package for the transformers-script oracle
(tests/oracle/test_python_generate_oracle.py): run a generated script under real Python with
it on ``sys.path`` and every ``generate()`` and pipeline call records the settings
transformers would run with.

The merge mirrors ``GenerationMixin._prepare_generation_config``
(``huggingface/transformers:src/transformers/generation/utils.py``, 4.50.0 and later,
through 5.19.0) as far as the settled fields go: with no ``generation_config=`` the model's
own ``generation_config`` is copied; with one, each of its fields still at the global
default takes the model's value when that differs from the default (``use_model_defaults``);
then ``generation_config.update(**kwargs)`` lets the call's keywords win. D of an assistant
is the assistant's own ``generation_config.num_assistant_tokens`` (the candidate generator
reads it there at 5.19.0: ``generation/candidate_generator.py``). The batch size is the rows
of ``input_ids`` (``_assisted_decoding``); a pipeline batches a list of n prompts by its
``batch_size`` B (first batch min(B, n); ``pipelines/base.py``).
"""

SOURCE = r'''
import copy, json, os, sys

_DEFAULTS = {
    "num_assistant_tokens": 20,
    "num_assistant_tokens_schedule": "constant",
    "assistant_confidence_threshold": 0.4,
    "prompt_lookup_num_tokens": None,
    "assistant_early_exit": None,
    "cache_implementation": None,
    "do_sample": False,
    "max_new_tokens": None,
}


class GenerationConfig:
    def __init__(self, **kwargs):
        for key, value in _DEFAULTS.items():
            setattr(self, key, value)
        for key, value in kwargs.items():
            setattr(self, key, value)

    def update(self, **kwargs):
        unused = {}
        for key, value in kwargs.items():
            if hasattr(self, key):
                setattr(self, key, value)
            else:
                unused[key] = value
        return unused


class _Tensor:
    def __init__(self, rows):
        self.rows = rows
        self.shape = (rows, 3)

    def to(self, *args, **kwargs):
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return _Tensor(len(range(self.rows)[index]))
        if isinstance(index, tuple) and index and isinstance(index[0], slice):
            return _Tensor(len(range(self.rows)[index[0]]))
        return _Tensor(1)

    def __len__(self):
        return self.rows


class _Encoding(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def to(self, *args, **kwargs):
        return self


class _Tokenizer:
    def __call__(self, text, *args, **kwargs):
        rows = 1 if isinstance(text, str) else len(text)
        return _Encoding(input_ids=_Tensor(rows), attention_mask=_Tensor(rows))

    def decode(self, *args, **kwargs):
        return ""

    batch_decode = decode


def _line():
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename != sys.argv[0]:
        frame = frame.f_back
    return frame.f_lineno if frame is not None else 0


def _record(line, config, assistant, rows, pipeline=False, model=None):
    out = {
        "line": line,
        "model": model,
        "assistant_name": getattr(assistant, "name", assistant),
        "assistant": assistant is not None,
        "prompt_lookup_num_tokens": config.prompt_lookup_num_tokens,
        "assistant_early_exit": config.assistant_early_exit,
        "cache_implementation": config.cache_implementation,
        "d": getattr(getattr(assistant, "generation_config", None), "num_assistant_tokens", 20),
        "batch_size": rows,
        "pipeline": pipeline,
    }
    with open(os.environ["SPECGATE_STUB_LOG"], "a") as log:
        log.write(json.dumps(out, default=repr) + "\n")


class _Model:
    def __init__(self, name):
        self.name = name
        self.generation_config = GenerationConfig()

    def to(self, *args, **kwargs):
        return self

    eval = cuda = half = to

    def _prepared(self, generation_config, kwargs):
        if generation_config is None:
            config = copy.deepcopy(self.generation_config)
        else:
            config = copy.deepcopy(generation_config)
            default = GenerationConfig()
            for key, mine in self.generation_config.__dict__.items():
                base = getattr(default, key, None)
                if getattr(config, key, None) == base and mine != base:
                    setattr(config, key, mine)
        rest = config.update(**kwargs)
        return config, rest

    def generate(self, inputs=None, generation_config=None, assistant_model=None, **kwargs):
        config, rest = self._prepared(generation_config, kwargs)
        ids = inputs if inputs is not None else rest.get("input_ids")
        rows = getattr(ids, "rows", None)
        _record(_line(), config, assistant_model, rows, model=self.name)
        return _Tensor(rows or 1)


class _Auto:
    @classmethod
    def from_pretrained(cls, name, *args, **kwargs):
        return _Model(name)


class _AutoTokenizer:
    @classmethod
    def from_pretrained(cls, name, *args, **kwargs):
        return _Tokenizer()


AutoModelForCausalLM = AutoModelForSeq2SeqLM = AutoModel = _Auto
LlamaForCausalLM = _Auto
AutoTokenizer = AutoProcessor = _AutoTokenizer


class _Pipeline:
    def __init__(self, model, assistant_model, batch_size, kwargs):
        self.model = model if isinstance(model, _Model) else _Model(model)
        if isinstance(assistant_model, str):
            assistant_model = _Model(assistant_model)
        self.assistant_model = assistant_model
        self.batch_size = batch_size
        self.kwargs = kwargs

    def __call__(self, inputs, *args, batch_size=None, generation_config=None, **kwargs):
        size = batch_size if batch_size is not None else self.batch_size
        size = 1 if size is None else size
        rows = 1 if isinstance(inputs, str) else min(size, len(inputs))
        merged = dict(self.kwargs)
        merged.update(kwargs)
        config, _ = self.model._prepared(generation_config, merged)
        _record(_line(), config, self.assistant_model, rows, pipeline=True)
        return [{"generated_text": ""}]


def pipeline(task=None, model=None, *args, assistant_model=None, batch_size=None, **kwargs):
    for key in ("tokenizer", "device", "device_map", "torch_dtype", "dtype"):
        kwargs.pop(key, None)
    return _Pipeline(model, assistant_model, batch_size, kwargs)
'''
