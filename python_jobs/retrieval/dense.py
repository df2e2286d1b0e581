"""Dense retrieval through LanceDB: batched query encoding, one search per batch under `full`, one prefiltered
search per question under the oracle conditions (each has its own candidate set)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from python_jobs.core.errors import InputError
from python_jobs.corpus import vectors
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER, DEFAULT_LONG_TEXT, LONG_TEXT_MODES, load_embedder, resolve
from python_jobs.retrieval import Context, Hit, Query, Retriever, RetrieverConfig, RetrieverTree, register

# the embedder's canonical name (the default's aliases resolve to it): the LanceDB table and the config hash use it
EmbedderName = Annotated[str, AfterValidator(lambda name: resolve(name)[0]), Field(
    description="Embedder of the LanceDB vectors (name or local path; flag: prefix = FlagEmbedding).")]
LongText = Annotated[Literal[LONG_TEXT_MODES], Field(  # type: ignore[valid-type]
    description="Which vectors of that embedder (as `finrag index --long-text` made them).")]
SearchMode = Annotated[Literal[vectors.SEARCH_MODES], Field(  # type: ignore[valid-type]
    description="Exact scan, or the IVF_PQ index built by `finrag index --ann`.")]


@register
class DenseConfig(RetrieverConfig):
    """LanceDB cosine search of the chunk vectors `finrag index` built (same embedder and long-text mode). Every
    retriever that searches vectors runs on it (hybrid, hyde, page_scorer, a wrapper of dense): these settings are
    theirs too."""

    name = "dense"
    can_be_first_stage = True

    embedder: EmbedderName = DEFAULT_EMBEDDER
    long_text: LongText = DEFAULT_LONG_TEXT
    dense_search: SearchMode = "flat"

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        return DenseRetriever(ctx, level, self)


def level_filter(ctx: Context, level: str) -> str:
    base = f"dataset = {vectors.sql_str(ctx.dataset)} AND chunker_id = {vectors.sql_str(ctx.chunker_id)}"
    return base + (" AND parent_chunk_id IS NOT NULL" if level == "child" else " AND parent_chunk_id IS NULL")


def lance_table(ctx: Context, dense: DenseConfig, level: str):
    def open_checked():
        emb = load_embedder(dense.embedder)
        store = vectors.VectorStore(ctx.home)
        name = vectors.table_name(emb.name, dense.long_text)
        hint = (f"run `finrag index --dataset {ctx.dataset} --chunker-id {ctx.chunker_id} --embedder {emb.name}"
                f" --long-text {dense.long_text}` first")
        if not store.exists(name):
            raise InputError(f"no vectors for embedder {emb.name!r}: {hint}", field="embedder")
        table = store.open(name)
        want = set(ctx.corpus(level).frame["chunk_id"].to_list())
        have = table.search().where(level_filter(ctx, level)).select(["chunk_id"]).limit(None).to_arrow()
        missing = want - set(have.column("chunk_id").to_pylist())
        if missing:
            raise InputError(f"{len(missing)} chunks of {ctx.dataset}.{ctx.chunker_id} are not embedded: {hint}",
                             field="embedder")
        return table

    return ctx.cached(("lance", dense.embedder, dense.long_text, level), open_checked)


class DenseRetriever:
    uses_dense = True

    def __init__(self, ctx: Context, level: str, dense: DenseConfig):
        self.ctx, self.level, self.dense = ctx, level, dense

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        table = lance_table(self.ctx, self.dense, self.level)
        emb = load_embedder(self.dense.embedder)
        out: list[list[Hit]] = []
        bs = self.ctx.batch_size
        for start in range(0, len(queries), bs):
            batch = queries[start : start + bs]
            vecs = emb.encode_queries([q.text for q in batch], batch_size=bs)
            out += search_vectors(self.ctx, self.dense, self.level, table, batch, vecs, depth)
        return out


def search_vectors(ctx: Context, dense: DenseConfig, level: str, table, queries: list[Query], vecs,
                   depth: int) -> list[list[Hit]]:
    """Dense search with given vectors (row i for queries[i]): one batched search for the unrestricted queries, one
    prefiltered search per restricted one (each oracle condition has its own candidate set). Shared by `dense` and
    the HyDE retrievers, which bring their own vectors."""
    base = level_filter(ctx, level)
    out: list[list[Hit]] = [[] for _ in queries]
    free = [i for i, q in enumerate(queries) if q.restriction is None]
    if free:
        for i, res in zip(free, vectors.search(table, vecs[free], base, depth, mode=dense.dense_search)):
            out[i] = _hits(res)
    for i, q in enumerate(queries):
        if q.restriction is not None:
            res = vectors.search(table, vecs[i : i + 1], f"{base} AND {q.restriction.where()}", depth,
                                 mode=dense.dense_search)[0]
            out[i] = _hits(res)
    return out


def _hits(res) -> list[Hit]:
    return [Hit(c, float(s)) for c, s in zip(res.column("chunk_id").to_pylist(), res.column("score").to_pylist())]
