"""The OmniEval topic seed (seeds/omnieval_topics.csv) is the flattened real topic tree, with English names."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from python_jobs.sources.topic_tree import flatten
from support.paths import PROJECT


def test_topic_seed_is_the_flattened_omnieval_tree(shared_data: Path) -> None:
    tree = json.loads((shared_data / "omnieval" / "topic_tree.json").read_text(encoding="utf-8"))
    rows = flatten(tree)
    with open(PROJECT / "seeds" / "omnieval_topics.csv", encoding="utf-8") as f:
        seed = list(csv.DictReader(f))
    assert [r["topic_id"] for r in seed] == [r["topic_id"] for r in rows]
    assert len(seed) == 46
    ipo = next(r for r in seed if r["name_zh"] == "IPO")
    assert (ipo["topic_id"], ipo["level"], ipo["l1_en"], ipo["l2_en"]) == (
        "投资/股票市场/IPO", "3", "Investment", "Stock market"
    )
    assert all(r["name_en"] and not any("\u4e00" <= ch <= "\u9fff" for ch in r["name_en"]) for r in seed)
