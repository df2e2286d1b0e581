"""A financial cross-encoder to start `finrag train-reranker` from: the packaged MiniLM fine-tuned on TAT-QA's
question -> evidence labels (../shared/data/tatqa), which FinanceBench never sees.

    .venv/bin/python -m bench.reranker.pretrain_tatqa --out /tmp/tatqa-ce --max-length 128   # 1,886 s on 2 cores
    FINRAG_HOME=... BASE_MODEL=/tmp/tatqa-ce bench/reranker/financebench.sh                # its per-fold fine-tuning

Why: the reranker fine-tuned per fold from the bi-encoder MiniLM starts from a randomly initialised scoring head and
learns it from 25-30 FinanceBench questions a fold (bench/reranker/README.md: held-out AUC ~0.70, PageRec@5 not
significantly above dense). TAT-QA (Zhu et al., 2021) has 3,300 questions over 10-K/annual-report excerpts (a table
and its paragraphs) with the paragraphs each answer uses (`rel_paragraphs`) and whether it reads the table: within-
filing relevance labels, the kind of judgement a page reranker has to make (the page that holds this company's
figure, not another page of the same filing).

Pairs, per question of TAT-QA's dev and test_gold files (test has no labels): positives are the paragraphs it uses
and, when it reads the table, the table (one row a line, cells joined by " | "); negatives are the context's other
paragraphs (up to --negatives), the table when the answer is from the text alone, and one paragraph of another
context (another company: the easy negative). They are fine-tuned by `finrag train-reranker`'s own fold trainer
(python_jobs/reranking/training.py's `fine_tune`: the same loss, trainer arguments and seeding), on all pairs at
once; the model is saved as a sentence-transformers CrossEncoder directory, which `--base-model` takes as a local
path. Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from python_jobs.page_scoring.folds import Pair

ROOT = Path(__file__).resolve().parents[2]
TATQA = ROOT.parent / "shared" / "data" / "tatqa"
FILES = ("tatqa_dataset_dev.json", "tatqa_dataset_test_gold.json")


def table_text(table: list[list[str]]) -> str:
    rows = [" | ".join(cell.strip() for cell in row if cell.strip()) for row in table]
    return "\n".join(r for r in rows if r)


def pairs(seed: int, negatives: int, limit: int | None) -> tuple[list[Pair], list[Pair]]:
    """(positives, negatives) from every labelled TAT-QA question, as the reranker's training pairs: the context's
    uid for the document, a paragraph's order (0 for the table) for the page."""
    rng = random.Random(seed)
    contexts = [c for name in FILES for c in json.loads((TATQA / name).read_text())]
    pos: list[Pair] = []
    neg: list[Pair] = []
    for ci, ctx in enumerate(contexts):
        doc = ctx["table"]["uid"]
        paragraphs = {str(p["order"]): p["text"] for p in ctx["paragraphs"]}
        table = table_text(ctx["table"]["table"])
        for q in ctx["questions"]:
            rel = {str(r) for r in q.get("rel_paragraphs") or []}
            uid, question = q["uid"], q["question"]
            uses_table = q.get("answer_from") in ("table", "table-text")
            pos += [Pair(uid, doc, int(o), question, paragraphs[o]) for o in sorted(rel) if o in paragraphs]
            if uses_table:
                pos.append(Pair(uid, doc, 0, question, table))
            others = [(o, t) for o, t in paragraphs.items() if o not in rel]
            rng.shuffle(others)
            neg += [Pair(uid, doc, int(o), question, t) for o, t in others[:negatives]]
            if not uses_table:
                neg.append(Pair(uid, doc, 0, question, table))
            other = contexts[(ci + 1 + rng.randrange(len(contexts) - 1)) % len(contexts)]
            paragraph = rng.choice(other["paragraphs"])
            neg.append(Pair(uid, other["table"]["uid"], paragraph["order"], question, paragraph["text"]))
            if limit and len(pos) >= limit:
                return pos, neg
    return pos, neg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="directory the CrossEncoder is saved to")
    ap.add_argument("--base-model", default="all-MiniLM-L6-v2")
    ap.add_argument("--negatives", type=int, default=3, help="other paragraphs of the same context per question")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--learning-rate", type=float, default=5e-5)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None, help="stop after this many positives (a quick check)")
    args = ap.parse_args()

    from python_jobs.reranking.training import RerankerTrainingConfig, fine_tune

    pos, neg = pairs(args.seed, args.negatives, args.limit)
    print(f"TAT-QA pairs: {len(pos)} positives, {len(neg)} negatives", flush=True)
    cfg = RerankerTrainingConfig(dataset="tatqa", base_model=args.base_model, epochs=args.epochs,
                                 batch_size=args.batch_size, learning_rate=args.learning_rate,
                                 max_length=args.max_length, seed=args.seed)
    t0 = time.perf_counter()
    losses, _, _ = fine_tune(cfg, pos, neg, args.out, args.out.with_name(args.out.name + ".work"),
                             desc="pretrain on TAT-QA")
    print(f"saved {args.out}: epoch losses {', '.join(f'{x:.4f}' for x in losses)}, "
          f"{time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
