"""OmniEval tasks and the splits generated instances land in.

Splits: a kept instance is gen_train or gen_test by a seeded hash of its question id (--test-fraction); an instance
the LLM inspector dropped lands with split dropped; a human-accepted instance whose seeded split is gen_test becomes
gen_human_test (qa_generation/human_inspection.py).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

TASKS = ("extractive", "multi_hop", "contrast", "long_form", "conversational")


KINDS = {  # task -> the generator prompt(s) it uses (question_type = the kind)
    "extractive": ("extractive",),
    "multi_hop": ("multi_hop_calc", "multi_hop_chain"),
    "contrast": ("contrast",),
    "long_form": ("long_form",),
    "conversational": ("conversational",),
}


# kinds whose second passage comes from another document (the first from the cell's unit)
CROSS_DOC_KINDS = ("multi_hop_chain", "contrast")


MIN_UNIT_CHARS = 200  # a chunk shorter than this (a heading, a page number) is no unit


SPLIT_DROPPED = "dropped"


# generated splits carry a prefix: an ingested benchmark's questions are 'test' in the same dataset, and a run on
# the generated test set must not be scored against (or counted with) the benchmark's qrels
SPLIT_TRAIN = "gen_train"


SPLIT_TEST = "gen_test"


SPLIT_HUMAN_TEST = "gen_human_test"


HUMAN = "human"


# ---- ids and splits ------------------------------------------------------------------------------------------------
def digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def assigned_split(question_id: str, seed: int, test_fraction: float) -> str:
    """'gen_test' or 'gen_train', a seeded hash of the question id (stable across re-runs and resumes)."""
    u = int(digest("split", seed, question_id)[:8], 16) / 0x1_0000_0000
    return SPLIT_TEST if u < test_fraction else SPLIT_TRAIN


def seeded_shuffle(items: list[Any], seed: int, salt: str) -> list[Any]:
    out = list(items)
    random.Random(f"{seed}:{salt}").shuffle(out)
    return out
