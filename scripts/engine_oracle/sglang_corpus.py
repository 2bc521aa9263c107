"""The SGLang corpus, generated from specgate's knowledge data (data/engines/sglang.json).

Every algorithm name of the ``algorithms`` table (as written, lower-cased, unknown
neighbours), every flag and alias of ``settings`` (long spellings, aliases, abbreviations
argparse accepts, ``=`` forms), every target architecture of
``eagle_without_draft_means_mtp``, the steps × topk × draft-tokens grid (chain, tree, pool
overflow, all-or-none), DFLASH block sizes, accept thresholds, the adaptive switch, TP/DP,
the environment variables the knowledge names, and seeded random combinations.

A case: id, group, target (model key), argv (launcher flags without ``--device``), and
optionally env (variables set while the case runs).
"""

from __future__ import annotations

import json
import random
from typing import Any

SEED = 16
LLAMA = "llama-v512"
DRAFT_FOR = {
    "EAGLE": "EAGLE-llama-v512",
    "EAGLE3": "EAGLE3-llama-v512",
    "NEXTN": None,
    "MTP": None,
    "STANDALONE": "llama-draft-v512",
    "DFLASH": "dflash-qwen3-v512",
    "NGRAM": None,
    "LOOKAHEAD": None,
}
FLAG_VALUES: dict[str, tuple[list[str], list[str]]] = {
    "--speculative-num-steps": (["1", "3", "5"], ["0", "-1", "x"]),
    "--speculative-eagle-topk": (["1", "2", "4"], ["0", "-2"]),
    "--speculative-num-draft-tokens": (["2", "4", "8", "16"], ["0", "1", "-3", "4.5"]),
    "--speculative-accept-threshold-single": (["1.0", "0.5"], ["1.5", "-0.1", "x"]),
    "--speculative-accept-threshold-acc": (["1.0", "0.3"], ["2"]),
    "--speculative-token-map": (["$MODELS/token-map.pt"], []),
    "--speculative-dflash-block-size": (["4", "8", "16"], ["0", "1", "-4"]),
    "--tp-size": (["1", "2", "4"], ["3", "8", "0"]),
    "--dp-size": (["1", "2"], ["0"]),
    "--mem-fraction-static": (["0.8"], ["1.5"]),
    "--context-length": (["256", "1024"], ["0"]),
}


def _m(key: str) -> str:
    return f"$MODELS/{key}"


class Corpus:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []
        self._seen: set[str] = set()

    def add(
        self, group: str, argv: list[str], target: str = LLAMA, env: dict[str, str] | None = None
    ) -> None:
        full = (
            ["--model-path", _m(target), *argv]
            if "--model-path" not in argv and "--model" not in argv
            else argv
        )
        case: dict[str, Any] = {"group": group, "target": target, "argv": full}
        if env:
            case["env"] = env
        key = json.dumps({k: v for k, v in case.items() if k != "group"}, sort_keys=True)
        if key in self._seen:
            return
        self._seen.add(key)
        case["id"] = f"sglang-{len(self.cases) + 1:04d}-{group}"
        self.cases.append(case)


def _algo(name: str, *, draft: bool = True) -> list[str]:
    argv = ["--speculative-algorithm", name]
    key = DRAFT_FOR.get(name.upper())
    if draft and key:
        argv += ["--speculative-draft-model-path", _m(key)]
    return argv


def generate(
    knowledge: dict[str, Any], *, n_random: int = 150, seed: int = SEED
) -> list[dict[str, Any]]:
    tables = knowledge["tables"]
    algorithms = list(tables["algorithms"]["entries"])
    mtp_archs = list(tables["eagle_without_draft_means_mtp"]["entries"])
    settings = {s["name"]: s for s in knowledge["settings"]}
    c = Corpus()

    # A. algorithm names: as written, lower-case, without draft, with the chain triple.
    for name in [*algorithms, "FROZEN_KV_MTP", "DSPARK", "UNO", "NONE"]:
        c.add("algorithm", _algo(name))
        c.add("algorithm-lower", _algo(name.lower()))
        c.add("algorithm-no-draft", _algo(name, draft=False))
        c.add(
            "algorithm-chain",
            [
                *_algo(name),
                "--speculative-num-steps",
                "3",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "4",
            ],
        )
        c.add("algorithm-on-mtp-target", _algo(name, draft=False), target="deepseek-v3-mtp1")
    for odd in ("EAGLE-3", "eagle_3", "SPECFORGE", "MEDUSA", "Ngram ", ""):
        c.add("algorithm-unknown", ["--speculative-algorithm", odd])

    # B. targets whose checkpoint carries the draft (EAGLE/NEXTN without a draft path).
    for arch in mtp_archs:
        for algo in ("EAGLE", "NEXTN", "EAGLE3"):
            c.add("mtp-arch", ["--speculative-algorithm", algo], target=f"arch-{arch}")
    for target in (
        "deepseek-v3-mtp0",
        "deepseek-v3-mtp1",
        "deepseek-v3-mtp2",
        "qwen3-next-mtp1",
        "qwen3-next-nomtp",
    ):
        for algo in ("EAGLE", "NEXTN", "MTP"):
            c.add("mtp-target", ["--speculative-algorithm", algo], target=target)
            c.add(
                "mtp-target",
                [
                    "--speculative-algorithm",
                    algo,
                    "--speculative-num-steps",
                    "2",
                    "--speculative-eagle-topk",
                    "1",
                    "--speculative-num-draft-tokens",
                    "3",
                ],
                target=target,
            )
    for draft in (
        "llama-nextn-name-v512",
        "deepseek-v3-mtp1",
        "llama-draft-v512",
        "llama-draft-v1024",
    ):
        for algo in ("EAGLE", "NEXTN", "STANDALONE", "EAGLE3"):
            c.add(
                "draft-path",
                ["--speculative-algorithm", algo, "--speculative-draft-model-path", _m(draft)],
            )

    # C. steps × topk × draft tokens (chain rewrite, tree pool, all-or-none).
    for algo in ("EAGLE3", "STANDALONE", "EAGLE"):
        for steps in (None, "1", "3", "5", "0"):
            for topk in (None, "1", "4", "0"):
                for tokens in (None, "2", "4", "8", "16", "64"):
                    if algo != "EAGLE3" and (steps in (None, "0") or topk in ("0",)):
                        continue
                    argv = _algo(algo)
                    for flag, v in (
                        ("--speculative-num-steps", steps),
                        ("--speculative-eagle-topk", topk),
                        ("--speculative-num-draft-tokens", tokens),
                    ):
                        if v is not None:
                            argv += [flag, v]
                    c.add("tree", argv)

    # D. every flag of the knowledge data: its spellings, good and bad values.
    for name, s in settings.items():
        if name.startswith("SGLANG_"):
            continue
        spellings = [name, *s.get("aliases", [])]
        context = _algo("NGRAM") if "dflash" not in name else _algo("DFLASH")
        if name in (
            "--speculative-eagle-topk",
            "--speculative-num-steps",
            "--speculative-num-draft-tokens",
        ):
            context = _algo("EAGLE3")
        if name in ("--model-path", "--speculative-algorithm", "--speculative-draft-model-path"):
            for spelling in spellings:
                if name == "--model-path":
                    c.add("flag-spelling", [spelling, _m(LLAMA), *_algo("NGRAM")])
                elif name == "--speculative-algorithm":
                    c.add(
                        "flag-spelling",
                        [
                            spelling,
                            "EAGLE3",
                            "--speculative-draft-model-path",
                            _m("EAGLE3-llama-v512"),
                        ],
                    )
                else:
                    c.add(
                        "flag-spelling",
                        ["--speculative-algorithm", "EAGLE3", spelling, _m("EAGLE3-llama-v512")],
                    )
            continue
        if s.get("switch"):
            for spelling in spellings:
                c.add("flag-switch", [*_algo("EAGLE3"), spelling])
                c.add("flag-switch", [*_algo("NGRAM"), spelling])
                c.add(
                    "flag-switch",
                    [
                        *_algo("EAGLE3"),
                        "--speculative-num-steps",
                        "3",
                        "--speculative-eagle-topk",
                        "1",
                        "--speculative-num-draft-tokens",
                        "4",
                        spelling,
                    ],
                )
            continue
        good, bad = FLAG_VALUES.get(name, (["1"], []))
        for spelling in spellings:
            for v in good:
                c.add("flag", [*context, spelling, v])
            c.add("flag-eq", [*context, f"{spelling}={good[0]}"])
        for v in bad:
            c.add("flag-bad", [*context, name, v])
    for abbrev in (
        "--speculative-algo",
        "--speculative-num-step",
        "--speculative-draft",
        "--speculative-eagle",
        "--speculative-num",
        "--spec-algorithm",
        "--tp",
        "--dp",
    ):
        c.add(
            "flag-abbrev",
            [
                abbrev,
                "EAGLE3" if "algo" in abbrev else "2",
                *(["--speculative-algorithm", "NGRAM"] if "algo" not in abbrev else []),
            ],
        )
    for removed in (
        "--speculative-draft-model-revision",
        "--speculative-eagle-topk-k",
        "--num-speculative-tokens",
        "--speculative-model",
        "--speculative-num-draft-token",
        "--speculative_num_steps",
        "--speculative-num_steps",
        "--speculative-draft-model-paths",
    ):
        c.add("flag-unknown", [*_algo("EAGLE3"), removed, "3"])

    # E. DFLASH block size vs draft tokens; thresholds; TP/DP; environment.
    for block in (None, "4", "8", "16"):
        for tokens in (None, "4", "8", "16"):
            for topk in (None, "1", "4"):
                argv = _algo("DFLASH")
                if block:
                    argv += ["--speculative-dflash-block-size", block]
                if tokens:
                    argv += ["--speculative-num-draft-tokens", tokens]
                if topk:
                    argv += ["--speculative-eagle-topk", topk]
                c.add("dflash", argv)
    for single in (None, "1.0", "0.7"):
        for acc in (None, "1.0", "0.2"):
            argv = [
                *_algo("EAGLE3"),
                "--speculative-num-steps",
                "3",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "4",
            ]
            if single:
                argv += ["--speculative-accept-threshold-single", single]
            if acc:
                argv += ["--speculative-accept-threshold-acc", acc]
            c.add("threshold", argv)
    for tp in ("1", "2", "4"):
        for dp in (None, "2"):
            for dpa in (False, True):
                for algo in ("EAGLE3", "STANDALONE", "NGRAM"):
                    argv = [*_algo(algo), "--tp-size", tp]
                    if dp:
                        argv += ["--dp-size", dp]
                    if dpa:
                        argv += ["--enable-dp-attention"]
                    c.add("parallel", argv)
    for env in (
        {"SGLANG_SIMULATE_ACC_LEN": "3.5"},
        {"SGLANG_ENABLE_SPEC_V2": "1"},
        {"SGLANG_ENABLE_SPEC_V2": "0"},
        {"SGLANG_SIMULATE_ACC_LEN": "x"},
    ):
        for argv in (
            [
                *_algo("EAGLE3"),
                "--speculative-num-steps",
                "3",
                "--speculative-eagle-topk",
                "4",
                "--speculative-num-draft-tokens",
                "8",
            ],
            [
                *_algo("EAGLE3"),
                "--speculative-num-steps",
                "3",
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                "4",
            ],
            _algo("NGRAM"),
        ):
            c.add("env", argv, env=env)
    for ngram_tokens in (None, "1", "4", "12", "32"):
        argv = _algo("NGRAM") + (
            ["--speculative-num-draft-tokens", ngram_tokens] if ngram_tokens else []
        )
        c.add("ngram", argv)
        c.add("ngram", [*argv, "--speculative-num-steps", "2"])

    # F. seeded random combinations.
    rng = random.Random(seed)
    flags = [f for f in FLAG_VALUES if f.startswith("--speculative")]
    for _ in range(n_random):
        algo = rng.choice([*algorithms, "EAGLE3", "EAGLE3"])
        argv = _algo(algo, draft=rng.random() < 0.8)
        for flag in rng.sample(flags, rng.choice([0, 1, 2, 3, 3, 4])):
            good, bad = FLAG_VALUES[flag]
            pool = good + bad if bad and rng.random() < 0.2 else good
            argv += [flag, rng.choice(pool)]
        if rng.random() < 0.2:
            argv += ["--tp-size", rng.choice(["1", "2", "4"])]
        if rng.random() < 0.1:
            argv += ["--speculative-adaptive"]
        target = rng.choice([LLAMA] * 4 + ["deepseek-v3-mtp1"])
        c.add("random", argv, target=target)
    return c.cases


def arch_variants(knowledge: dict[str, Any]) -> list[str]:
    return list(knowledge["tables"]["eagle_without_draft_means_mtp"]["entries"])
