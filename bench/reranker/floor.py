"""What bounds a page reranker over dense on FinanceBench (bench/reranker/README.md, "the floor"), on a home where
financebench.sh ran: the questions with gold pages in the lake, dense's top-N chunks for each (the rerank stage's
candidates), and

- the ceiling: PageRec@5 if a reranker put the best 5 of dense's top N first (the gold pages those N cover);
- the window: word pieces per page as the reranker reads it (pages.py: headers removed, the filing's label in
  front) and where in its gold page the evidence text starts, against MiniLM's 256 (and 512) word pieces;
- with `--training <id>`: that training's fold models on the same candidates (each question by the fold that held it
  out; a training on page windows scores a page by its best window, as the rerank run does; every score through the
  home's score cache, so a model that reranked them before scores nothing): the within-question AUC of gold against
  the other candidate pages, PageRec@5 reranked alone and fused with dense by each fold's weight chosen on its
  training questions (its `params.fusion`; a training from before fusion: chosen here by the same rule), each with
  its paired sign-flip test against dense.

    FINRAG_HOME=<home> .venv/bin/python -m bench.reranker.floor [--training <reranker training id>] [--top-n N]
"""

from __future__ import annotations

import argparse

import numpy as np

from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import default_model_path
from python_jobs.corpus.lake_chunks import read_chunks, resolve_chunker
from python_jobs.corpus.rerank_scores import ScoreStats, score_pairs
from python_jobs.page_scoring.folds import fold_of_question, gold_documents, training_pairs
from python_jobs.page_scoring.pages import read_page_texts
from python_jobs.page_scoring.registry import load_training
from python_jobs.page_scoring.rerankers import FUSION_WEIGHTS, KIND, fuse
from python_jobs.page_scoring.windows import PageWindows, load_tokenizer
from python_jobs.retrieval import Context, Query, RetrieverTree
from python_jobs.retrieval.rerank import RerankConfig

DATASET = "financebench"
K = 5


def sign_flip_p(a: list[float], b: list[float], n: int = 20000, seed: int = 0) -> float:
    d = np.asarray(b) - np.asarray(a)
    signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(n, len(d)))
    return float((np.sum(np.abs((signs * d).mean(1)) >= abs(d.mean()) - 1e-12) + 1) / (n + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--training", help="a `finrag train-reranker --passage page` training of this home")
    ap.add_argument("--top-n", type=int, default=RerankConfig.min_depth,
                    help="dense's candidates per question (default: what the rerank stage reads at k = 5)")
    args = ap.parse_args()
    lake = Lake()
    evidence = lake.read("evidence", where={"dataset": DATASET})
    pages = read_page_texts(lake, DATASET, True)
    text = {(d, p): t for d, p, t in pages.select("doc_id", "page_number", "text").iter_rows()}
    pairs = training_pairs(lake.read("questions", where={"dataset": DATASET}), evidence, pages)
    gold: dict[str, set] = {}
    for p in pairs:
        gold.setdefault(p.question_id, set()).add((p.doc_id, p.page_number))
    question = {p.question_id: p.question for p in pairs}
    qids = sorted(gold)
    chunker = resolve_chunker(lake, DATASET, None)
    ctx = Context(lake.home, DATASET, chunker, read_chunks(lake, DATASET, chunker), 64, False)
    corpus = ctx.corpus("top")
    row = {c: i for i, c in enumerate(corpus.chunk_ids)}
    depth = max(args.top_n, 40)
    found = RetrieverTree.of("dense").build(ctx, depth).search([Query(q, question[q]) for q in qids], depth)
    cands: dict[str, list[tuple[float, list]]] = {}
    for q, hits in zip(qids, found, strict=True):
        cands[q] = []
        for h in hits:
            i = row[h.chunk_id]
            d, a, b = str(corpus.doc_ids[i]), int(corpus.page_start[i]), int(corpus.page_end[i])
            cands[q].append((float(h.score), [(d, n) for n in range(a, max(a, b) + 1) if (d, n) in text]))

    def rec(q: str, order: list[int], k: int = K) -> float:
        return len({p for j in order[:k] for p in cands[q][j][1]} & gold[q]) / len(gold[q])

    dense = [rec(q, list(range(len(cands[q])))) for q in qids]
    print(f"{len(qids)} questions with gold pages in the lake, {len(pairs)} (question, gold page) pairs")
    print(f"dense PageRec@{K}: {np.mean(dense):.3f}")
    for n in sorted({10, args.top_n, 40}):
        print(f"gold pages covered by dense's top {n} chunks (a reranker's ceiling over them): "
              f"{np.mean([rec(q, list(range(len(cands[q]))), n) for q in qids]):.3f}")
    per_question = np.mean([len({p for c in cands[q][:args.top_n] for p in c[1]}) for q in qids])
    print(f"pages per chunk {np.mean([len(c[1]) for q in qids for c in cands[q]]):.2f}; candidate pages per "
          f"question in the top {args.top_n}: {per_question:.1f}")

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(default_model_path())
    pieces = lambda s: len(tok(s, add_special_tokens=False)["input_ids"])  # noqa: E731
    lens = np.array([pieces(t) for t in text.values()])
    print(f"word pieces per page: median {np.median(lens):.0f}, quartiles {np.percentile(lens, 25):.0f} / "
          f"{np.percentile(lens, 75):.0f}; whole within 230 (256 less a question) {np.mean(lens <= 230):.3f}, "
          f"within 486 {np.mean(lens <= 486):.3f}")
    starts = []
    for d, p, ev in evidence.filter(evidence["page_number"].is_not_null()).select(
            "doc_id", "page_number", "evidence_text").iter_rows():
        page = text.get((d, int(p)))
        if page and ev:
            at = page.find(" ".join(ev.split()[:8]))
            starts.append(pieces(page[:at]) if at >= 0 else -1)
    s = np.array([x for x in starts if x >= 0])
    print(f"gold evidence found in its page: {len(s)} of {len(starts)}; it starts at word piece median "
          f"{np.median(s):.0f}; before 230: {np.mean(s < 230):.3f}, before 486: {np.mean(s < 486):.3f}")
    if not args.training:
        return

    dense_aucs = []  # dense's own: a candidate page's score is its best covering chunk's
    for q in qids:
        best: dict[tuple, float] = {}
        for sc, covered in cands[q][:args.top_n]:
            for p in covered:
                best[p] = max(best.get(p, -np.inf), sc)
        pos = [v for p, v in best.items() if p in gold[q]]
        neg = [v for p, v in best.items() if p not in gold[q]]
        if pos and neg:
            dense_aucs.append(np.mean([(x > y) + 0.5 * (x == y) for x in pos for y in neg]))
    print(f"dense's within-question AUC of gold pages against the other candidate pages {np.mean(dense_aucs):.3f} "
          f"({len(dense_aucs)} questions)")
    training = load_training(lake, args.training, KIND, field="training")
    folds = training.as_folds()
    docs = gold_documents(evidence)
    fold_of = {q: fold_of_question(folds, q, docs) for q in qids}
    score: dict[str, np.ndarray] = {}
    windows = None  # a training on page windows: each page scored by its best window (MaxP), as the rerank run does
    if training.params.get("page_windows"):
        windows = PageWindows(load_tokenizer(training.folds[0].model), int(training.params["max_length"]),
                              float(training.params["window_stride"]), training.doc_label)
        print(f"page windows: {windows.params()}")
    for f, fm in enumerate(training.folds):
        mine = [q for q in qids if fold_of[q] == f]
        keys = [(q, j, p, w) for q in mine for j, c in enumerate(cands[q][:args.top_n]) for p in c[1]
                for w in ([text[p]] if windows is None else [x.text for x in windows.windows(question[q], text[p])])]
        flat = score_pairs(lake.home, fm.model, [(question[q], w) for q, _, _, w in keys], 32, True, ScoreStats(),
                           windows.namespace() if windows else "")
        page_score: dict[tuple, float] = {}
        for q in mine:
            score[q] = np.full(args.top_n, -1.0)
        for (q, j, p, _), v in zip(keys, flat, strict=True):
            score[q][j] = max(score[q][j], float(v))
            page_score[(q, p)] = max(page_score.get((q, p), -np.inf), float(v))
        aucs: dict[str, list[float]] = {"all": [], "gold document": []}
        for q in mine:
            gold_docs = {d for d, _ in gold[q]}
            pos = [v for (qq, p), v in page_score.items() if qq == q and p in gold[q]]
            for part, keep in (("all", lambda d: True), ("gold document", lambda d: d in gold_docs)):  # noqa: B023
                neg = [v for (qq, p), v in page_score.items() if qq == q and p not in gold[q] and keep(p[0])]
                if pos and neg:
                    aucs[part].append(np.mean([(x > y) + 0.5 * (x == y) for x in pos for y in neg]))
        print(f"fold {f}: {len(mine)} questions; within-question AUC of gold pages against the other candidate "
              f"pages {np.mean(aucs['all']):.3f} ({len(aucs['all'])} questions), against the other pages of the gold "
              f"document only {np.mean(aucs['gold document']):.3f} ({len(aucs['gold document'])})")

    def fused(q: str, w: float) -> float:
        s = fuse(score[q], np.array([c[0] for c in cands[q][:args.top_n]]), w)
        return rec(q, sorted(range(len(s)), key=lambda j: (-s[j], j)))

    by_w = {q: [fused(q, w) for w in FUSION_WEIGHTS] for q in qids}
    weight = {}
    for f, fm in enumerate(training.folds):
        chosen = fm.params.get("fusion")
        if chosen:
            weight[f] = float(chosen["weight"])
        else:  # the training's rule: the best mean over the fold's training questions, ties to the larger weight
            train_q = [q for q in qids if fold_of[q] != f]
            means = [np.mean([by_w[q][i] for q in train_q]) for i in range(len(FUSION_WEIGHTS))]
            weight[f] = FUSION_WEIGHTS[max(range(len(means)), key=lambda i: (round(means[i], 12), i))]
    for name, got in [("reranked alone", [by_w[q][0] for q in qids]),
                      (f"fused, weights by fold {weight}", [by_w[q][FUSION_WEIGHTS.index(weight[fold_of[q]])]
                                                            for q in qids])]:
        wins = sum(b > a for a, b in zip(dense, got, strict=True))
        losses = sum(b < a for a, b in zip(dense, got, strict=True))
        print(f"{name}: PageRec@{K} {np.mean(got):.3f} vs dense {np.mean(dense):.3f}, {wins} wins / {losses} losses, "
              f"sign-flip p = {sign_flip_p(dense, got):.3f}")


if __name__ == "__main__":
    main()
