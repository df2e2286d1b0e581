"""Page windows for a cross-encoder (MaxP): a page longer than the model's window is read as overlapping windows of
it, the page scored by its best window.

A FinanceBench page is a median 672 word pieces as the page scorer reads it (pages.py), MiniLM reads 256 with the
question: whole-page scoring cuts all but the page's head. Here (`PageWindows`):

- the window: `max_length` word pieces of (question, window) as the model's tokenizer counts them — the pair's
  special tokens, the question's pieces and the page's label (pages.py: the filing's company, type and period in
  front, `label | body`) taken off first, the rest is the body's share (at least `MIN_BODY`);
- the split: the body's word pieces from 0 in steps of `stride` x the body's share (0.5: each window overlaps the
  next by half), the last window ending at the body's end; a window starts and ends on a word's first piece (a
  word is never cut), each window's text is `label | <its slice of the body>`; a body that fits is one window, the
  page's own text;
- the evidence window (`evidence_window`, for training): the window that holds most of the evidence text — found as
  the evidence's first `MATCH_WORDS` normalised words (lower case, letters and digits only) in the page's words; else
  the window sharing the most of the evidence's distinct words, if it holds at least `MIN_OVERLAP` of them; else the
  page's first window (`how` says which);
- MaxP (`max_by`): a page's (or a chunk's, over the pages it covers) score is the best of its windows' scores.

Deterministic: the same tokenizer, text and settings give the same windows.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from python_jobs.corpus.encoders import resolve

LABEL_SEP = " | "  # pages.py puts the document's label in front of the page's body with it
MIN_BODY = 16  # word pieces of body a window keeps however long the question is
MATCH_WORDS = 8
MIN_OVERLAP = 0.5
DEFAULT_STRIDE = 0.5

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Window:
    start: int  # character offsets of the window's slice in the page's body
    end: int
    text: str  # what the model reads: label | slice


def words(text: str) -> list[tuple[str, int, int]]:
    """The text's normalised words with their character spans: lower case, runs of letters and digits."""
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text.lower())]


def split_label(text: str, labelled: bool) -> tuple[str, str]:
    """(label, body) of a page text as pages.py writes it (`label | body` with a label, the body alone without)."""
    if labelled and LABEL_SEP in text:
        label, _, body = text.partition(LABEL_SEP)
        return label, body
    return "", text


class PageWindows:
    """Splits page texts into a model's windows (see the module's docstring); tokenises each page once."""

    def __init__(self, tokenizer: Any, max_length: int, stride: float = DEFAULT_STRIDE, labelled: bool = True):
        if not 0 < stride <= 1:
            raise ValueError(f"the window stride is a share of a window in (0, 1], got {stride}")
        self.tok, self.max_length, self.stride, self.labelled = tokenizer, int(max_length), float(stride), labelled
        self.special = int(tokenizer.num_special_tokens_to_add(pair=True))
        self._pieces: dict[str, tuple[list[tuple[int, int]], list[int]]] = {}
        self._length: dict[str, int] = {}

    def params(self) -> dict[str, object]:
        """What decides the windows (recorded with a training and a run)."""
        return {"max_length": self.max_length, "stride": self.stride, "min_body": MIN_BODY,
                "match_words": MATCH_WORDS, "min_overlap": MIN_OVERLAP}

    def namespace(self) -> str:
        """The score cache's namespace of these windows' scores (apart from whole pages' and other windows')."""
        return "page_windows:" + ",".join(f"{k}={v}" for k, v in sorted(self.params().items()))

    def length(self, text: str) -> int:
        """Word pieces of a text, no special tokens."""
        if text not in self._length:
            self._length[text] = len(self.tok(text, add_special_tokens=False, verbose=False)["input_ids"])
        return self._length[text]

    def _body_pieces(self, body: str) -> tuple[list[tuple[int, int]], list[int]]:
        """The body's word pieces' character spans and, for each, the index of its word's first piece."""
        if body not in self._pieces:
            enc = self.tok(body, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
            spans = [tuple(o) for o in enc["offset_mapping"]]
            ids = enc.word_ids() if hasattr(enc, "word_ids") else list(range(len(spans)))
            first: list[int] = []
            for i, w in enumerate(ids):
                first.append(first[-1] if i and w is not None and w == ids[i - 1] else i)
            self._pieces[body] = (spans, first)  # type: ignore[assignment]
        return self._pieces[body]

    def budget(self, question: str, label: str) -> int:
        """Word pieces of body a window of this question holds."""
        taken = self.special + self.length(question) + (self.length(label + LABEL_SEP) if label else 0)
        return max(MIN_BODY, self.max_length - taken)

    def windows(self, question: str, page_text: str) -> list[Window]:
        label, body = split_label(page_text, self.labelled)
        spans, first = self._body_pieces(body)
        n, size = len(spans), self.budget(question, label)
        if n <= size:
            return [Window(0, len(body), page_text)]
        step = max(1, int(size * self.stride))
        starts = list(range(0, n - size + 1, step))
        if starts[-1] + size < n:
            starts.append(n - size)
        out: list[Window] = []
        for i, s in enumerate(starts):
            a = first[s]  # back to its word's first piece; the last window forward, so that it ends the body
            if i == len(starts) - 1 and a + size < n:
                a = next((j for j in range(s, n) if first[j] == j), s)
            e = min(a + size, n)
            if e < n and first[e] > a:  # end before the word the cut would split
                e = first[e]
            lo, hi = spans[a][0], spans[e - 1][1]
            w = Window(lo, hi, f"{label}{LABEL_SEP}{body[lo:hi]}" if label else body[lo:hi])
            if not out or (w.start, w.end) != (out[-1].start, out[-1].end):
                out.append(w)
        return out

    def evidence_window(self, question: str, page_text: str, evidence: str) -> tuple[Window, str]:
        """The window that holds the evidence, and how it was found: `match` (its first words), `overlap` (its
        words) or `first` (not found: the page's first window)."""
        wins = self.windows(question, page_text)
        _, body = split_label(page_text, self.labelled)
        ev = words(evidence)
        if not ev:
            return wins[0], "first"
        page = words(body)
        at = _find(page, [w for w, _, _ in ev])
        if at is not None:
            lo = page[at][1]
            hi = page[min(at + len(ev), len(page)) - 1][2]
            best = max(range(len(wins)), key=lambda i: (min(hi, wins[i].end) - max(lo, wins[i].start), -i))
            return wins[best], "match"
        want = {w for w, _, _ in ev}
        held = [len(want & {w for w, _, _ in words(body[x.start : x.end])}) for x in wins]
        best = max(range(len(wins)), key=lambda i: (held[i], -i))
        if held[best] >= MIN_OVERLAP * len(want):
            return wins[best], "overlap"
        return wins[0], "first"


def _find(page: list[tuple[str, int, int]], ev: list[str]) -> int | None:
    """The index of the page's first word where the evidence's first MATCH_WORDS words occur in a row."""
    head = ev[:MATCH_WORDS]
    seq = [w for w, _, _ in page]
    for i in range(len(seq) - len(head) + 1):
        if seq[i : i + len(head)] == head:
            return i
    return None


def max_by(owners: Iterable[Hashable], scores: Iterable[float]) -> dict[Hashable, float]:
    """MaxP: each owner's best score (an owner: a page, or a candidate chunk, with its windows' scores)."""
    out: dict[Hashable, float] = {}
    for o, s in zip(owners, scores, strict=True):
        out[o] = max(out.get(o, -np.inf), float(s))
    return out


# a candidate with no passage text scores below every pair (both backends' scores are sigmoids, in [0, 1])
NO_PASSAGE = -1.0


def candidate_scores(owners: Iterable[tuple[int, int]], scores: Iterable[float], sizes: list[int]) -> list[np.ndarray]:
    """Each query's candidates' scores from their passages' (or windows') pair scores, as the rerank retriever and
    the reranker's choice of its fusion weight both score them: `owners` (query index, candidate index) of each
    pair; a candidate's score is its best pair's (MaxP), NO_PASSAGE without any."""
    out = [np.full(n, NO_PASSAGE) for n in sizes]
    for (qi, ci), s in max_by(owners, scores).items():
        out[qi][ci] = s
    return out


def load_tokenizer(model: str) -> Any:
    """The tokenizer of a model (name or local path; offline unless downloads are allowed)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve(model)[2])
