"""`finrag train-reranker`: fine-tune one cross-encoder per document-level fold and land `model_trainings`.

Examples (`passage` chunk or page):
- positives: the question's gold passages. `page`: its gold pages whose text is in the lake, as the page scorer reads
  them (python_jobs/page_scoring/pages.py: headers removed, the document's label in front) — the page scorer's
  training pairs; `chunk`: the chunks of the chunks partition covering a gold page (the oracle_page candidate set),
  or for a question whose evidence names no page, every chunk of its gold documents (a BEIR corpus: its one entry);
- hard negatives: the first stage's (`first_stage`, by default the rerank retriever's, with its default settings)
  top `negatives_depth` results for the question that are not gold — the chunks themselves, or at `page` the pages
  those chunks cover —, the first `negatives` of them in rank order. A negative of a fold's test document is left
  out of that fold's training data, so no fold model sees a page (or chunk) of the documents it will score.

Page windows (`page_windows`, `page` only; python_jobs/page_scoring/windows.py): a page is read as overlapping
windows of `max_length` word pieces (question and filing label included; `window_stride` x a window apart). The
positive of a gold page is its window that holds the question's evidence text on that page (FinanceBench's
`evidence_text`: its first words, else most of its words, else the page's first window; one positive per distinct
evidence window); the negatives are the `negative_windows` windows of each hard-negative page that share the most
words with the question (ties: the earlier window) — never other windows of a gold page. The fusion step and the
rerank retriever score a page by its best window (MaxP). The training's params record the windows' settings and how
each evidence window was found (`page_windows`).

Folds, seeds, training id and model store are the page scorer's (python_jobs/page_scoring/: `make_folds` over the
positive pairs — a question and all its gold documents on one side —, `train_folds`, `seeded`): fold models under
`<home>/models/reranker/<training_id>/fold-<f>/`, one `model_trainings` row per fold (kind `reranker`), each
question later scored only by the fold that held its gold documents out (`fold_of_question`).

Training: sentence-transformers' `CrossEncoderTrainer`, a one-label CrossEncoder from `base_model` (the packaged
all-MiniLM-L6-v2 by default: its encoder under a fresh, seeded classification head; or any local cross-encoder),
`BinaryCrossEntropyLoss` on labels 1 / 0 with the positives weighted by the negatives-to-positives ratio of the
fold, pairs truncated to `max_length` word pieces, AdamW with linear decay after a warm-up. `head_only` trains only
the scoring head (BERT's pooler and the classifier: 148k of MiniLM's 22.7M weights) — the FinanceRAG paper's
parameter-efficient variant: faster, and the fold model's encoder is the base model's. Deterministic on CPU as the
page scorer is (the same seed on the same examples gives the same training id, folds and weights).

Fusion weight (for `--rerank-fusion trained`, python_jobs/page_scoring/rerankers.py: `fuse`): once every fold model
is in place, each question with a gold passage has its first stage's top `fusion_top_n` candidates (chunks; at
`page` a chunk is scored by its best page, as the rerank retriever does) scored by the fold model that held it out
(through the score cache, so a later rerank run over the same candidates scores nothing again). Fold f's weight is
the one of `FUSION_WEIGHTS` with the best mean recall at `fusion_k` (gold passages in, or at `page` gold pages
covered by, the top `fusion_k` fused candidates, over the gold passages) over fold f's *training* questions — each
scored by its own held-out fold model; ties go to the larger weight (the first stage's order). Fold f's test
questions never take part in choosing their own weight. Each fold's params record its weight and the mean recall of
every weight on its training questions (`fusion`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.rules import RULES
from python_jobs.core.run_ids import derived_id
from python_jobs.corpus.encoders import load_trainable_cross_encoder, resolve
from python_jobs.corpus.lake_chunks import read_chunks, resolve_chunker
from python_jobs.corpus.rerank_scores import ScoreStats, score_pairs
from python_jobs.page_scoring.folds import Fold, Pair, fold_of_question, gold_documents, make_folds, training_pairs
from python_jobs.page_scoring.pages import normalisation_params, read_page_texts
from python_jobs.page_scoring.rerankers import FUSION_WEIGHTS, KIND, fuse
from python_jobs.page_scoring.training import (
    FoldTrainingConfig,
    fold_dir_name,
    pairs_digest,
    run_trainer,
    seeded,
    train_folds,
    trainer_arguments,
)
from python_jobs.page_scoring.windows import DEFAULT_STRIDE, PageWindows, candidate_scores, load_tokenizer, words
from python_jobs.retrieval import Context, Query, RetrieverTree
from python_jobs.retrieval.conditions import restrictions
from python_jobs.retrieval.rerank import RerankConfig

PASSAGES = ("chunk", "page")
HEAD = ("classifier", "pooler")  # the parameter names of the scoring head (`head_only`)


@dataclass(frozen=True)
class RerankerTrainingConfig(FoldTrainingConfig):
    """Everything that decides the fold models (hashed, with the examples, into the training id)."""

    epochs: int = 2
    passage: str = "chunk"
    first_stage: str | None = None  # None: the rerank retriever's default first stage
    negatives: int = 8
    negatives_depth: int = 30
    chunker_id: str | None = None
    head_only: bool = False
    max_length: int = 256
    doc_label: bool = True
    fusion_top_n: int = RerankConfig.min_depth  # the candidates the fusion weight is chosen over (rerank's depth)
    fusion_k: int = 5  # the cut-off of the recall that chooses it
    page_windows: bool = False
    window_stride: float = DEFAULT_STRIDE
    negative_windows: int = 2

    def hashed(self) -> dict[str, object]:
        out = asdict(self)
        if not self.page_windows:  # added later: whole-page and chunk trainings keep their ids
            for key in ("page_windows", "window_stride", "negative_windows"):
                del out[key]
        return out


def check_config(cfg: RerankerTrainingConfig) -> None:
    checks = [
        (cfg.passage in PASSAGES, "passage", f"--passage must be one of {PASSAGES}, got {cfg.passage!r}"),
        (cfg.epochs >= 1, "epochs", f"--epochs must be >= 1 (a fresh head scores nothing), got {cfg.epochs}"),
        (cfg.negatives >= 0, "negatives", f"--negatives must be >= 0, got {cfg.negatives}"),
        (cfg.negatives_depth >= 1, "negatives_depth", f"--negatives-depth must be >= 1, got {cfg.negatives_depth}"),
        (cfg.batch_size >= 1, "batch_size", f"--batch-size must be >= 1, got {cfg.batch_size}"),
        (cfg.learning_rate > 0, "learning_rate", f"--learning-rate must be > 0, got {cfg.learning_rate}"),
        (0 <= cfg.warmup_ratio < 1, "warmup_ratio", f"--warmup-ratio must be in [0, 1), got {cfg.warmup_ratio}"),
        (16 <= cfg.max_length <= 512, "max_length", f"--max-length must be in [16, 512], got {cfg.max_length}"),
        (cfg.fusion_top_n >= 1, "fusion_top_n", f"--fusion-top-n must be >= 1, got {cfg.fusion_top_n}"),
        (1 <= cfg.fusion_k <= cfg.fusion_top_n, "fusion_k",
         f"--fusion-k must be in [1, --fusion-top-n], got {cfg.fusion_k}"),
        (not cfg.page_windows or cfg.passage == "page", "page_windows",
         "--page-windows splits pages: it needs --passage page"),
        (0 < cfg.window_stride <= 1, "window_stride", f"--window-stride must be in (0, 1], got {cfg.window_stride}"),
        (cfg.negative_windows >= 1, "negative_windows", f"--negative-windows must be >= 1, got {cfg.negative_windows}"),
    ]
    for ok, option, message in checks:
        if not ok:
            raise InputError(message, field=option)


@dataclass
class Candidate:
    """A first-stage result as the rerank retriever scores it: its score and its passages (key, text)."""

    score: float
    passages: list[tuple[object, str]]  # chunk: [(chunk_id, its text)]; page: [((doc, page), page text), ...]


@dataclass
class Examples:
    pairs: list[Pair]  # the positives (the folds are made over them)
    negatives: dict[str, list[Pair]]  # question_id -> its hard negatives, best first
    folds: list[Fold]
    chunker_id: str
    candidates: dict[str, list[Candidate]]  # question_id -> the first stage's top fusion_top_n, best first
    gold: dict[str, set]  # question_id -> its gold passages' keys (chunk ids, or (doc, page))
    windows: PageWindows | None = None  # page windows (MaxP), or None: whole passages
    positive_windows: dict[tuple[str, str, int], list[Pair]] | None = None  # (q, doc, page) -> its evidence windows
    window_stats: dict[str, object] | None = None
    # question_id -> its gold documents as the rerank retriever reads them (folds.gold_documents), so that the fusion
    # weight is chosen with each question in the fold that will score it
    gold_docs: dict[str, frozenset[str]] = field(default_factory=dict)

    def positives(self, pairs: list[Pair]) -> list[Pair]:
        """The training positives of these gold pairs: the pairs, or with windows their evidence windows."""
        if self.positive_windows is None:
            return pairs
        return [w for p in pairs for w in self.positive_windows[(p.question_id, p.doc_id, p.page_number)]]

    @property
    def pairs_text(self) -> dict[str, str]:
        """question_id -> the question's text."""
        return {p.question_id: p.question for p in self.pairs}


def _gold_chunk_pairs(questions: pl.DataFrame, evidence: pl.DataFrame, ctx: Context) -> list[Pair]:
    corpus = ctx.corpus("top")
    limits = restrictions("oracle_doc", evidence)
    limits.update(restrictions("oracle_page", evidence))  # a gold page, where the evidence names one
    texts = corpus.frame["text"].to_list()
    out = []
    for qid, question in questions.select("question_id", "question").sort("question_id").iter_rows():
        if qid not in limits:
            continue
        for i in np.flatnonzero(corpus.mask(limits[qid])):
            if texts[i].strip():
                out.append(Pair(qid, str(corpus.doc_ids[i]), int(corpus.page_start[i]), question,
                                f"{corpus.chunk_ids[i]}\x00{texts[i]}"))
    return out


def passage_text(p: Pair) -> str:
    """A pair's passage (a chunk pair carries its chunk id before the text, so two equal texts stay two chunks)."""
    return p.page_text.split("\x00", 1)[-1]


def prepare(lake: Lake, cfg: RerankerTrainingConfig, progress: bool = True) -> Examples:
    questions = lake.read("questions", where={"dataset": cfg.dataset})
    if questions.height == 0:
        raise InputError(f"no questions for dataset {cfg.dataset!r}: ingest them first", field="dataset")
    evidence = lake.read("evidence", where={"dataset": cfg.dataset})
    chunker_id = resolve_chunker(lake, cfg.dataset, cfg.chunker_id)
    chunks = read_chunks(lake, cfg.dataset, chunker_id)
    ctx = Context(lake.home, cfg.dataset, chunker_id, chunks, 64, progress)
    page_text: dict[tuple[str, int], str] = {}
    if cfg.passage == "page":
        pages = read_page_texts(lake, cfg.dataset, cfg.doc_label)
        page_text = {(d, p): t for d, p, t in pages.select("doc_id", "page_number", "text").iter_rows()}
        pairs = training_pairs(questions, evidence, pages)
    else:
        pairs = _gold_chunk_pairs(questions, evidence, ctx)
    if not pairs:
        raise InputError(f"dataset {cfg.dataset!r} has no gold {cfg.passage} in the lake to train on", field="dataset")
    folds = make_folds(pairs, cfg.folds, cfg.seed)

    windows = positive_windows = window_stats = None
    if cfg.page_windows:
        windows = PageWindows(load_tokenizer(cfg.base_model), cfg.max_length, cfg.window_stride, cfg.doc_label)
        positive_windows, window_stats = evidence_windows(windows, pairs, evidence)

    tree = RetrieverTree.of(cfg.first_stage)
    if tree.uses_llm:
        raise InputError(f"--first-stage {cfg.first_stage!r} calls the LLM; mine negatives with a first stage that "
                         "does not", field="first_stage")
    text_of = {p.question_id: p.question for p in pairs}
    qids = sorted(text_of)
    depth = max(cfg.negatives_depth, cfg.fusion_top_n)
    engine = tree.build(ctx, depth)
    hits = engine.search([Query(q, text_of[q]) for q in qids], depth)
    corpus = ctx.corpus("top")
    row = {c: i for i, c in enumerate(corpus.chunk_ids)}
    chunk_text = ctx.texts
    gold: dict[str, set] = {}
    for p in pairs:
        gold.setdefault(p.question_id, set()).add(p.page_text if cfg.passage == "chunk" else (p.doc_id, p.page_number))
    negatives: dict[str, list[Pair]] = {}
    candidates: dict[str, list[Candidate]] = {}
    for q, found in zip(qids, hits, strict=True):
        seen: set = set()
        out: list[Pair] = []
        candidates[q] = []
        for rank, h in enumerate(found):
            i = row[h.chunk_id]
            doc = str(corpus.doc_ids[i])
            if cfg.passage == "chunk":
                keys = [(h.chunk_id, int(corpus.page_start[i]), f"{h.chunk_id}\x00{chunk_text[h.chunk_id]}")]
            else:
                first, last = int(corpus.page_start[i]), int(corpus.page_end[i])
                keys = [((doc, n), n, page_text[(doc, n)]) for n in range(first, max(first, last) + 1)
                        if (doc, n) in page_text] if first >= 0 else []
            if rank < cfg.fusion_top_n:
                candidates[q].append(Candidate(float(h.score), [
                    (key, w) for key, num, text in keys
                    for w in ([passage_text(Pair(q, doc, num, "", text))] if windows is None else
                              [x.text for x in windows.windows(text_of[q], text)])]))
            if rank >= cfg.negatives_depth:
                continue
            for key, num, text in keys:
                is_gold = text in gold[q] if cfg.passage == "chunk" else key in gold[q]
                if key in seen or is_gold or not passage_text(Pair(q, doc, num, "", text)).strip():
                    continue
                seen.add(key)
                out.append(Pair(q, doc, num, text_of[q], text))
        negatives[q] = out[: cfg.negatives]
        if windows is not None:
            negatives[q] = [w for n in negatives[q] for w in negative_windows(windows, n, cfg.negative_windows)]
    gold_keys = {q: {g.split("\x00", 1)[0] for g in keys} if cfg.passage == "chunk" else keys
                 for q, keys in gold.items()}
    return Examples(pairs, negatives, folds, chunker_id, candidates, gold_keys, windows, positive_windows,
                    window_stats, gold_documents(evidence))


def evidence_windows(windows: PageWindows, pairs: list[Pair], evidence: pl.DataFrame
                     ) -> tuple[dict[tuple[str, str, int], list[Pair]], dict[str, object]]:
    """Each gold page's positive windows: one per distinct window holding an evidence text of the question on that
    page (the page's first window when it has none), and how many evidence texts were found by each way."""
    texts: dict[tuple[str, str, int], list[str]] = {}
    rel = evidence.filter(RULES.is_relevant(pl.col("relevance")) & pl.col("page_number").is_not_null())
    for q, d, n, t in rel.sort("question_id", "evidence_ordinal").select(
            "question_id", "doc_id", "page_number", "evidence_text").iter_rows():
        texts.setdefault((q, d, int(n)), []).append(t or "")
    how: dict[str, int] = {"match": 0, "overlap": 0, "first": 0}
    out: dict[tuple[str, str, int], list[Pair]] = {}
    for p in pairs:
        key = (p.question_id, p.doc_id, p.page_number)
        got: dict[str, Pair] = {}
        for ev in dict.fromkeys(texts.get(key) or [""]):
            w, found = windows.evidence_window(p.question, p.page_text, ev)
            how[found] += 1
            got.setdefault(w.text, Pair(p.question_id, p.doc_id, p.page_number, p.question, w.text))
        out[key] = list(got.values())
    n_windows = sum(len(v) for v in out.values())
    return out, {**windows.params(), "evidence_found": how, "n_positive_windows": n_windows}


def negative_windows(windows: PageWindows, page: Pair, n: int) -> list[Pair]:
    """A hard-negative page's `n` windows sharing the most distinct words with the question (ties: the earlier)."""
    want = {w for w, _, _ in words(page.question)}
    wins = windows.windows(page.question, page.page_text)
    shared = [len(want & {w for w, _, _ in words(x.text)}) for x in wins]
    best = sorted(range(len(wins)), key=lambda i: (-shared[i], i))[:n]
    return [Pair(page.question_id, page.doc_id, page.page_number, page.question, wins[i].text) for i in sorted(best)]


def training_id(cfg: RerankerTrainingConfig, digest: str) -> str:
    blob = json.dumps({**cfg.hashed(), "normalisation": normalisation_params(cfg.doc_label), "examples": digest,
                       "kind": KIND}, sort_keys=True)
    return derived_id(cfg.dataset, KIND, hashlib.sha256(blob.encode()).hexdigest())


def fine_tune(cfg: RerankerTrainingConfig, positives: list[Pair], negatives: list[Pair], out_dir: Path,
              work_dir: Path, progress: bool = True, desc: str = "train") -> tuple[list[float], int, dict[str, object]]:
    """Fine-tune a fresh cross-encoder on the fold's examples; save it to out_dir. Returns the mean loss of each
    epoch, the window and what the fold's params record (negatives, trainable weights)."""
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    examples = [*positives, *negatives]
    with seeded(cfg.seed):
        _, model = load_trainable_cross_encoder(cfg.base_model, cfg.max_length)
        if cfg.head_only:
            for name, weight in model.named_parameters():
                weight.requires_grad = any(part in name for part in HEAD)
        trainable = sum(w.numel() for w in model.parameters() if w.requires_grad)
        data = Dataset.from_dict({"query": [p.question for p in examples],
                                  "passage": [passage_text(p) for p in examples],
                                  "label": [1.0] * len(positives) + [0.0] * len(negatives)})
        args = trainer_arguments(CrossEncoderTrainingArguments, work_dir, cfg.epochs, cfg.batch_size,
                                 cfg.learning_rate, cfg.warmup_ratio, cfg.seed)
        weight = torch.tensor(max(len(negatives), 1) / max(len(positives), 1))
        trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=data,
                                      loss=BinaryCrossEntropyLoss(model, pos_weight=weight))
        losses = run_trainer(trainer, desc, progress)
        model.save(str(out_dir), create_model_card=False)
    return losses, int(model.max_seq_length), {"n_train_negatives": len(negatives), "n_trainable_weights": trainable}


def examples_digest(ex: Examples) -> str:
    negatives = [n for q in sorted(ex.negatives) for n in ex.negatives[q]]
    blob = f"{pairs_digest(ex.pairs)}|{pairs_digest(negatives)}|{ex.chunker_id}"
    if ex.positive_windows is not None:
        blob += f"|{pairs_digest(ex.positives(ex.pairs))}"
    return hashlib.sha256(blob.encode()).hexdigest()


def candidate_recall(candidates: list[Candidate], order: list[int], gold: set, k: int) -> float:
    """The share of the gold passages in (`page`: covered by) the top k candidates of `order`."""
    got = {key for j in order[:k] for key, _ in candidates[j].passages}
    return len(got & gold) / len(gold) if gold else 0.0


def choose_fusion_weights(home: Path, cfg: RerankerTrainingConfig, ex: Examples, model_dir: Path,
                          progress: bool = True) -> dict[int, dict[str, object]]:
    """Each fold's fusion weight, chosen on its training questions (see the module's docstring)."""
    fold_of = {q: fold_of_question(ex.folds, q, ex.gold_docs) for q in sorted(ex.candidates)}
    recall: dict[str, list[float]] = {}  # question -> its recall at each weight
    stats = ScoreStats()
    for fold in ex.folds:
        qids = [q for q, f in fold_of.items() if f == fold.fold]
        keys = [(qi, j, text) for qi, q in enumerate(qids) for j, c in enumerate(ex.candidates[q])
                for _, text in c.passages]
        model = str(model_dir / fold_dir_name(fold.fold))
        scores = score_pairs(home, model, [(ex.pairs_text[qids[qi]], text) for qi, _, text in keys],
                             cfg.batch_size, progress, stats, ex.windows.namespace() if ex.windows else "")
        best = dict(zip(qids, candidate_scores([(qi, j) for qi, j, _ in keys], scores,
                                               [len(ex.candidates[q]) for q in qids]), strict=True))
        for q in qids:
            first = np.array([c.score for c in ex.candidates[q]])
            recall[q] = []
            for w in FUSION_WEIGHTS:
                fused = fuse(best[q], first, w)
                order = sorted(range(len(fused)), key=lambda j: (-fused[j], j))
                recall[q].append(candidate_recall(ex.candidates[q], order, ex.gold[q], cfg.fusion_k))
    out: dict[int, dict[str, object]] = {}
    for fold in ex.folds:
        train_q = [q for q, f in fold_of.items() if f != fold.fold]
        means = [float(np.mean([recall[q][i] for q in train_q])) if train_q else 0.0
                 for i in range(len(FUSION_WEIGHTS))]
        pick = max(range(len(FUSION_WEIGHTS)), key=lambda i: (round(means[i], 12), i))  # ties: the larger weight
        out[fold.fold] = {"fusion": {"weight": FUSION_WEIGHTS[pick], "top_n": cfg.fusion_top_n, "k": cfg.fusion_k,
                                     "n_questions": len(train_q),
                                     "recall_by_weight": {str(w): round(m, 6) for w, m in
                                                          zip(FUSION_WEIGHTS, means, strict=True)}}}
    return out


def train_reranker(lake: Lake, cfg: RerankerTrainingConfig, training_id_override: str | None = None,
                   progress: bool = True) -> dict[str, object]:
    """Train one cross-encoder per document-level fold; land one `model_trainings` row per fold."""
    check_config(cfg)
    cfg = RerankerTrainingConfig(**{**asdict(cfg), "base_model": resolve(cfg.base_model)[0],
                                    "first_stage": cfg.first_stage or RerankConfig.default("first_stage")})
    t_all = time.perf_counter()
    ex = prepare(lake, cfg, progress)
    cfg = RerankerTrainingConfig(**{**asdict(cfg), "chunker_id": ex.chunker_id})
    digest = examples_digest(ex)
    tid = check_id(training_id_override or training_id(cfg, digest), "training id")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    def fit(fold: Fold, train: list[Pair], out: Path, work: Path, desc: str):
        test_docs = set(fold.test_doc_ids)
        negatives = [n for q in sorted({p.question_id for p in train}) for n in ex.negatives.get(q, [])
                     if n.doc_id not in test_docs]
        return fine_tune(cfg, ex.positives(train), negatives, out, work, progress, desc)

    rows = train_folds(lake, KIND, tid, ex.pairs, ex.folds, fit,
                       {"dataset": cfg.dataset, "base_model": cfg.base_model},
                       {**asdict(cfg), "normalisation": normalisation_params(cfg.doc_label),
                        "examples_sha256": digest, "n_negatives": sum(map(len, ex.negatives.values())),
                        **({"page_windows_found": ex.window_stats} if ex.window_stats else {})},
                       progress, finish=lambda model_dir: choose_fusion_weights(lake.home, cfg, ex, model_dir,
                                                                                progress))
    return {"training_id": tid, "dataset": cfg.dataset, "passage": cfg.passage, "folds": len(ex.folds),
            "fusion_weights": [json.loads(r["params"])["fusion"]["weight"] for r in rows],
            "pairs": len(ex.pairs), "negatives": sum(map(len, ex.negatives.values())), "epochs": cfg.epochs,
            "train_seconds": round(sum(r["train_seconds"] for r in rows), 1),
            "seconds": round(time.perf_counter() - t_all, 1)}
