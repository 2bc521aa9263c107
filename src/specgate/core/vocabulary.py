"""The names every layer shares, each defined once: draft mechanisms, engines, draft passes.

``speculation.mechanism`` names follow the claims schema's enum (a test holds the two
equal); the engines are those with a knowledge file under ``specgate/data/engines/``
(their display names are in those files). Annotations stay objects here (no postponed
annotations): the start-up records that use them are built without compiling strings.
"""

from typing import Literal, get_args

#: A ``speculation.mechanism`` value, in the claims schema's order.
Mechanism = Literal[
    "ngram",
    "suffix",
    "eagle",
    "eagle3",
    "medusa",
    "mtp",
    "draft_model",
    "mlp_speculator",
    "other",
    "dflash",
    "pard",
]
#: Every ``speculation.mechanism`` name: the schema's enum, the engine readers' type,
#: the builder and the doctor's ``--mechanism`` choices.
MECHANISMS: tuple[str, ...] = get_args(Mechanism)
#: Mechanisms whose one forward pass yields every draft (docs/theory.md#cost-model).
SINGLE_PASS_MECHANISMS = ("dflash", "pard")

#: An engine specgate reads the configs of (one knowledge file each).
Engine = Literal["vllm", "sglang", "trtllm", "transformers", "llamacpp", "tgi", "mlxlm"]
#: Every engine, in the order readers are tried.
ENGINE_NAMES: tuple[str, ...] = get_args(Engine)

#: Whether the drafter runs one forward per draft token or one for all.
DraftPasses = Literal["per_token", "single"]
