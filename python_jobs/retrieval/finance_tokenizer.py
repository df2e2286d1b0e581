"""A finance-aware tokenizer for BM25 and keyword extraction.

Generic analyzers lose what financial questions hinge on: they split `10-K` into `10` + `k`, drop `%`, break
`$1,577.00` into `1` + `577` + `00`, and stem tickers. Here (all lower-cased):
- form types stay whole: `10-k`, `10-q`, `8-k`, `20-f`, `def 14a` -> `10-k`, `10-q`, `8-k`, `20-f`, `14a`;
- numbers are normalised: `$1,577.00` -> `1577`, `8.70` -> `8.7`, `(12)` -> `12`; a percentage also yields
  `12.5%` besides `12.5`, so "12.5%" in a question matches "12.5 %" or "12.5%" in a filing;
- years and fiscal labels: `FY2018` -> `fy2018` + `2018`, `Q2` -> `q2`, `2Q22` -> `2q22`;
- tickers and short upper-case names (`MMM`, `AMD`, `CVS`) are kept (no length cut, no stemming of them);
- words: possessives dropped (`ACME's` -> `acme`), Lucene's English stopwords removed, a light plural strip
  (`revenues` -> `revenue`, `liabilities` -> `liability`), no aggressive stemming (PyStemmer is not installed, and
  stems merge financial terms).
"""

from __future__ import annotations

import re
from functools import cache


@cache
def stopwords() -> frozenset[str]:
    # imported when first used: bm25s (and numba under it) takes half a second to import, and the retriever registry
    # imports this module for every `finrag retrieve`, --help included
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


_TOKEN = re.compile(
    r"""
    (?P<form>\b\d{1,2}-[a-z]\b)                        # 10-k, 10-q, 8-k, 20-f
  | (?P<alnum>[a-z]+\d[a-z\d]*|\d+[a-z][a-z\d]*)       # fy2018, q2, 2q22, 14a, 3m
  | (?P<num>\$?\(?(?!\d{1,2}-[a-z]\b)\d[\d,]*(?:\.\d+)?\)?\s?%?)          # 1,577.00  (12)  12.5%  12.5 %
  | (?P<word>[a-z]+(?:[&'][a-z]+)*)                     # words, s&p, o'reilly
    """,
    re.VERBOSE,
)
_YEAR = re.compile(r"(?:19|20)\d{2}")


def _number(raw: str) -> list[str]:
    pct = raw.rstrip().endswith("%")
    core = raw.strip().strip("$()% ").replace(",", "")
    if not core:
        return []
    if "." in core:
        core = core.rstrip("0").rstrip(".") or "0"
    return [core, core + "%"] if pct else [core]


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    stop = stopwords()
    out: list[str] = []
    for m in _TOKEN.finditer(text.lower()):
        kind, raw = m.lastgroup, m.group()
        if kind == "form":
            out.append(raw)
        elif kind == "num":
            out.extend(_number(raw))
        elif kind == "alnum":
            out.append(raw)
            year = _YEAR.search(raw)
            if year and len(raw) > 4:
                out.append(year.group())
        else:
            raw = raw[:-2] if raw.endswith("'s") else raw  # possessive: acme's -> acme
            if raw in stop or (len(raw) == 1 and raw not in {"q"}):
                continue
            out.append(raw if "&" in raw or "'" in raw else _singular(raw))
    return out


def tokenize_many(texts: list[str]) -> list[list[str]]:
    return [tokenize(t) for t in texts]
