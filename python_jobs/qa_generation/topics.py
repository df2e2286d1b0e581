"""The topic tree generated instances are classified into (OmniEval's, flattened into seeds/omnieval_topics.csv)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR
from python_jobs.core.errors import InputError

DEFAULT_TOPICS_CSV = PROJECT_DIR / "seeds" / "omnieval_topics.csv"


# ---- topics ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Topic:
    topic_id: str  # the path below the root, '/'-joined zh names (= questions.topic_path joined)
    name_zh: str
    name_en: str

    @property
    def path(self) -> list[str]:
        return self.topic_id.split("/")


def load_topics(path: str | Path | None = None) -> list[Topic]:
    """The leaf topics of a flattened topic tree (the seed CSV `finrag topics flatten` writes)."""
    p = Path(path) if path else DEFAULT_TOPICS_CSV
    try:
        with open(p, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            need = ["topic_id", "level", "name_zh", "name_en", "is_leaf"]
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"topics file lacks column {missing[0]!r} (write it with `finrag topics flatten`)",
                                 file=str(p), line=1, field=missing[0])
            leaves = []
            for line, row in enumerate(reader, start=2):
                if not row["topic_id"]:
                    raise InputError("empty topic_id", file=str(p), line=line, field="topic_id")
                if row["is_leaf"].strip().lower() not in ("true", "false"):
                    raise InputError(f"is_leaf must be True/False, got {row['is_leaf']!r}", file=str(p), line=line,
                                     field="is_leaf")
                if row["is_leaf"].strip().lower() == "true" and row["level"] != "0":
                    leaves.append(Topic(row["topic_id"], row["name_zh"], row["name_en"] or row["name_zh"]))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the topics file: {exc}", file=str(p), field="topics") from None
    if not leaves:
        raise InputError("the topics file has no leaf topic below the root", file=str(p), field="is_leaf")
    names = [t.name_en.lower() for t in leaves]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:  # the classifier answers with a name: it must pick out one leaf
        raise InputError(f"two leaf topics share the name {dup!r}", file=str(p), field="name_en")
    return leaves
