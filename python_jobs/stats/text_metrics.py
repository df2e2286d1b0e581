"""Scalar text metrics (SPEC §5), defined once here and exposed to SQL by the dbt-duckdb plugin.

Every lexical metric the warehouse reports is one of these functions; SQL calls them as DuckDB functions
(`rouge_l_f`, `token_f1`, `exact_match`, `bleu`, `numeric_match`, `numeric_gold`), nothing re-implements them.

- rouge_l_f(pred, ref): ROUGE-L F-measure as `rouge-score` computes it (its tokenizer, Porter stemmer on); the LCS
  length is computed bit-parallel (same value, checked against rouge-score in the tests) so long texts stay fast.
- token_f1 / exact_match(pred, ref): the SQuAD v1.1 evaluation script's normalisation (lower case, punctuation and
  the articles a/an/the removed, whitespace collapsed) and bag-of-tokens F1.
- bleu(pred, ref): sacrebleu's sentence BLEU with its default sentence smoothing (`exp`, as `sacrebleu.sentence_bleu`
  and the `sacrebleu` CLI use), 13a tokenisation, scaled to [0, 1].
- numeric_match(pred, gold, tolerance): 1.0 when some number in the prediction lies within `tolerance` (relative;
  default the rules' numeric_match tolerance, python_jobs/core/rules.yml) of the gold number, 0.0 when none does, NULL
  when the gold is not a numeric answer (see `numeric_gold`). Numbers are parsed with sign, parentheses for negatives
  ("(12.5)%", "(5.2%)"), thousands separators, currency, % and scale words ("$1,577 million" = "1.577 billion"; a
  one-letter scale only glued: "5m", "$3B"), ranges ("10-12%" matches 11%). A number is compared scaled, as written
  (gold "$1577.00" to a question asked "in USD millions" matches "$1,577 million") and, for a percentage, as a fraction
  ("3.2%" = 0.032). Years (2018, FY2022), document types (10-K) and the company 3M are not amounts.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from python_jobs.core.rules import RULES
from python_jobs.stats import sql_functions
from python_jobs.stats.sql_functions import arrow_array

# ---- SQuAD normalisation (token F1, exact match) ---------------------------------------------------------------
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def squad_normalize(text: str) -> str:
    """The SQuAD v1.1 script's normalize_answer."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(pred: str | None, ref: str | None) -> float | None:
    if pred is None or ref is None:
        return None
    return float(squad_normalize(pred) == squad_normalize(ref))


def token_f1(pred: str | None, ref: str | None) -> float | None:
    if pred is None or ref is None:
        return None
    p, r = squad_normalize(pred).split(), squad_normalize(ref).split()
    if not p or not r:
        # the SQuAD 2.0 rule: two empty answers agree, one empty answer scores 0
        return float(p == r)
    common = Counter(p) & Counter(r)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(r)
    return 2 * precision * recall / (precision + recall)


# ---- ROUGE-L, BLEU ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _rouge_tokenizer():
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=True)


@lru_cache(maxsize=65536)
def rouge_tokens(text: str) -> tuple[str, ...]:
    """rouge-score's own tokens (lower case, non-alphanumerics dropped, Porter stemmer on tokens > 3 chars).

    Cached: in the chunk-evidence overlap one evidence text meets every retrieved chunk of its question.
    """
    return tuple(_rouge_tokenizer().tokenize(text))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Hyyrö 2004): O(len(a) * len(b) / word size).

    The same number rouge-score's dynamic-programming table gives (tests check it), fast enough to score
    every retrieved chunk against long gold evidence texts in `dbt build`.
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for tok in b:
        m = masks.get(tok, 0)
        u = v & m
        v = ((v + u) | (v & ~m)) & full
    return len(a) - bin(v).count("1")


def rouge_l_f(pred: str | None, ref: str | None) -> float | None:
    """ROUGE-L F as rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True).score(ref, pred).fmeasure."""
    if pred is None or ref is None:
        return None
    target, prediction = rouge_tokens(ref), rouge_tokens(pred)
    if not target or not prediction:
        return 0.0
    lcs = lcs_length(target, prediction)
    precision, recall = lcs / len(prediction), lcs / len(target)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


BLEU_SMOOTHING = "exp"


@lru_cache(maxsize=1)
def _bleu():
    from sacrebleu.metrics import BLEU

    # effective_order: a short sentence is not zeroed by a missing 4-gram order (sentence_bleu does the same)
    return BLEU(smooth_method=BLEU_SMOOTHING, effective_order=True)


def bleu(pred: str | None, ref: str | None) -> float | None:
    if pred is None or ref is None:
        return None
    # sacrebleu rounds nothing here; the float sum can land a hair above 100
    return min(1.0, float(_bleu().sentence_score(pred, [ref]).score) / 100.0)


# ---- numbers ------------------------------------------------------------------------------------------------------
_SCALES = {
    "thousand": 1e3, "thousands": 1e3, "k": 1e3,
    "million": 1e6, "millions": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6,
    "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9,
    "trillion": 1e12, "trillions": 1e12, "tn": 1e12,
}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_NUMBER = re.compile(
    rf"""
    (?<![A-Za-z0-9.,])                          # not glued to a word (FY2022, Q3, 10-K's 10 is handled below)
    (?P<neg>[-\u2212\u2013])?\s*
    (?P<open>\()?\s*
    (?P<cur>(?:US)?\$|USD\s*|€|£|EUR\s*|GBP\s*)?\s*
    (?P<neg2>[-\u2212])?
    (?P<num>{_NUM})
    (?:(?P<pct_low>\s*%)?\s*(?:-|\u2013|to)\s*(?P<high>{_NUM}))?   # a range: 10-12%, 5%-7%, 10 to 12 million
    (?P<close>\))?
    (?:\s*(?P<pct>%|percent\b|per\s+cent\b))?
    (?P<close2>\))?
    (?:(?P<glued>[kKmMbB]\b|mn\b|bn\b|mm\b|tn\b)                                   # a letter scale: glued (5m, $3B)
       |\s?(?P<word>thousands?|millions?|billions?|trillions?|mn|bn|mm|tn)\b)?     # a word: at most one space away
    (?P<after>\s*[A-Za-z']*)
    """,
    re.IGNORECASE | re.VERBOSE,
)
_DOC_TYPE = re.compile(r"^-[KQ]\b")  # 10-K, 10-Q, 8-K are document types, not amounts
_WORD = re.compile(r"[A-Za-z]+")
# words a numeric gold may carry around its number without becoming a sentence
_UNIT_WORDS = {"usd", "us", "dollars", "dollar", "eur", "euro", "euros", "gbp", "percent", "per", "cent", "x",
               "times", "days", "years", "shares", "approximately", "about", "roughly", *(_SCALES)}
# words after "3M" that make it an amount rather than the company
_AMOUNT_WORDS = {"dollars", "dollar", "usd", "shares", "units", "customers", "users", "employees", "people", "in"}
MAX_GOLD_WORDS = 3


@dataclass(frozen=True)
class Amount:
    """A number as written in a text: low == high unless it is a range ("10-12%"); sign applied."""

    low: float
    high: float
    scale: float = 1.0  # 1e6 for "million", "m", "mn"; 1 without a scale word
    percent: bool = False

    def readings(self) -> list[tuple[float, float]]:
        """The (low, high) values it may stand for: scaled, as written (a gold "$1577.00" to a question asked in
        USD millions matches "$1,577 million"), and a percentage as a fraction ("3.2%" = 0.032)."""
        out = [(self.low * self.scale, self.high * self.scale)]
        if self.scale != 1.0:
            out.append((self.low, self.high))
        if self.percent:
            out.append((self.low / 100, self.high / 100))
        return out


def _is_year(m: re.Match[str]) -> bool:
    """A bare four-digit integer 1900-2099, or a range of two (2019-2021), with no currency, sign, percent or scale,
    is a year, not an amount."""
    def year(num: str | None) -> bool:
        return num is not None and len(num) == 4 and num.isdigit() and 1900 <= int(num) <= 2099

    return (year(m["num"]) and (m["high"] is None or year(m["high"])) and not m["cur"]
            and not (m["neg"] or m["neg2"] or m["pct"] or m["pct_low"] or m["glued"] or m["word"]))


def parse_amounts(text: str | None) -> list[Amount]:
    """Every amount in `text`: signs and parentheses applied, currency, thousands separators, %, scale words
    (a letter scale only glued to its number), ranges. Years (2018, FY2022), document types (10-K) and the company
    3M (an uppercase "3M" with no currency before it and no amount word after it) are not amounts."""
    if not text:
        return []
    out = []
    for m in _NUMBER.finditer(text):
        tail = text[m.end("num") if m["high"] is None else m.end("high"):]
        if _is_year(m) or _DOC_TYPE.match(tail):
            continue
        after = re.sub(r"'s$", "", (m["after"] or "").strip().lower())
        if m["glued"] == "M" and m["num"] == "3" and not m["cur"] and after not in _AMOUNT_WORDS:
            continue
        low = float(m["num"].replace(",", ""))
        high = float(m["high"].replace(",", "")) if m["high"] else low
        if m["neg"] or m["neg2"] or (m["open"] and (m["close"] or m["close2"])):
            low, high = -high, -low
        scale_word = (m["glued"] or m["word"] or "").lower()
        scale = _SCALES[scale_word] if scale_word and not m["pct"] else 1.0
        out.append(Amount(low, high, scale, bool(m["pct"] or m["pct_low"])))
    return out


def numeric_gold(gold: str | None) -> float | None:
    """The gold answer's number when the gold is a numeric answer, else None.

    A numeric answer holds exactly one amount (not a range) and at most MAX_GOLD_WORDS other words (units and scale
    words do not count): "$1577.00", "24.26%", "1.9x", "$1,577 million". Sentences that merely contain a number are
    not numeric answers; ROUGE-L and token F1 score those.
    """
    amounts = parse_amounts(gold)
    if len(amounts) != 1 or amounts[0].low != amounts[0].high:
        return None
    words = [w for w in _WORD.findall(gold or "") if w.lower() not in _UNIT_WORDS]
    if len(words) > MAX_GOLD_WORDS:
        return None
    return amounts[0].readings()[0][0]


def _close(pred: tuple[float, float], gold: tuple[float, float], tolerance: float) -> bool:
    """The predicted value (or range) reaches the gold value within `tolerance`, relative to the gold."""
    lo, hi = pred
    g = gold[0]
    if g == 0:
        return lo <= 0 <= hi
    slack = tolerance * abs(g)
    return lo - slack <= g <= hi + slack


def numeric_match(pred: str | None, gold: str | None,
                  tolerance: float | None = RULES.numeric_tolerance) -> float | None:
    if gold is None or numeric_gold(gold) is None:
        return None
    tol = RULES.numeric_tolerance if tolerance is None else float(tolerance)
    gold_readings = parse_amounts(gold)[0].readings()
    for amount in parse_amounts(pred):
        if any(_close(p, g, tol) for p in amount.readings() for g in gold_readings):
            return 1.0
    return 0.0


# ---- text cuts ----------------------------------------------------------------------------------------------------
def first_words(text: str | None, n: int | None) -> str | None:
    """The first n whitespace-separated words (the answer-file guideline's 300-word cut); None/0 = no cut."""
    if text is None or not n:
        return text
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n])


# ---- DuckDB registration ----------------------------------------------------------------------------------------
def _arrow_udf(fn: Callable[..., float | None], n_args: int) -> Callable:
    """Wrap a row function as a vectorised (Arrow) DuckDB UDF: one Python call per chunk, not per row.

    DuckDB reads the arity from the Python signature, hence one wrapper per arity.
    """
    import pyarrow as pa

    def rows(*arrays) -> pa.Array:
        cols: Iterable[list] = [a.to_pylist() for a in arrays]
        return arrow_array([fn(*row) for row in zip(*cols, strict=True)], pa.float64())

    if n_args == 1:
        return lambda a: rows(a)
    if n_args == 2:
        return lambda a, b: rows(a, b)
    if n_args == 3:
        return lambda a, b, c: rows(a, b, c)
    raise ValueError(n_args)


# name -> (function, number of text arguments)
SQL_FUNCTIONS: dict[str, tuple[Callable[..., float | None], int]] = {
    "rouge_l_f": (rouge_l_f, 2),
    "token_f1": (token_f1, 2),
    "exact_match": (exact_match, 2),
    "bleu": (bleu, 2),
    "numeric_gold": (numeric_gold, 1),
}


def register_duckdb_functions(conn, existing: Collection[str] | None = None) -> None:
    """Register the metrics on a DuckDB connection (called by the dbt-duckdb plugin for every connection); `existing`:
    the connection's scalar functions, when the caller has read them (sql_functions.scalar_functions)."""
    from duckdb import sqltypes as t

    existing = sql_functions.scalar_functions(conn) if existing is None else existing
    for name, (fn, n_args) in SQL_FUNCTIONS.items():
        sql_functions.register(name, fn, _arrow_udf)
        if name in existing:
            continue
        conn.create_function(name, _arrow_udf(fn, n_args), [t.VARCHAR] * n_args, t.DOUBLE, type="arrow",
                             null_handling="special", side_effects=False)
    sql_functions.register("numeric_match_tol", numeric_match, _arrow_udf)
    sql_functions.register("numeric_match", numeric_match, register_duckdb_macros)
    sql_functions.register("first_words", first_words)
    if "numeric_match_tol" not in existing:
        conn.create_function("numeric_match_tol", _arrow_udf(numeric_match, 3), [t.VARCHAR, t.VARCHAR, t.DOUBLE],
                             t.DOUBLE, type="arrow", null_handling="special", side_effects=False)
    register_duckdb_macros(conn)
    if "first_words" not in existing:
        def cut(texts, ns):
            import pyarrow as pa

            return arrow_array([first_words(x, n) for x, n in zip(texts.to_pylist(), ns.to_pylist(), strict=True)],
                               pa.string())

        conn.create_function("first_words", cut, [t.VARCHAR, t.INTEGER], t.VARCHAR, type="arrow",
                             null_handling="special", side_effects=False)


# ---- Spark registration -----------------------------------------------------------------------------------------
def _pandas_rows(fn: Callable[..., object], n_args: int) -> Callable:
    """Wrap a row function as a Spark pandas UDF body: one Python call per Arrow batch, like the DuckDB wrapper.
    Missing values reach it as None whatever pandas' missing marker (pandas 3 strings carry NaN)."""
    import pandas as pd

    def rows(*series: pd.Series) -> pd.Series:
        cols = [[None if pd.isna(v) else v for v in s] for s in series]
        return pd.Series([fn(*row) for row in zip(*cols, strict=True)], dtype=object)

    # pandas_udf reads the kind of UDF from the signature's type hints (evaluated, not this module's strings)
    def one(a):
        return rows(a)

    def two(a, b):
        return rows(a, b)

    def three(a, b, c):
        return rows(a, b, c)

    wrapper = {1: one, 2: two, 3: three}[n_args]
    wrapper.__annotations__ = {**{p: pd.Series for p in "abc"[:n_args]}, "return": pd.Series}
    return wrapper


def register_spark_functions(spark) -> None:
    """Register the same metrics on a SparkSession as pandas UDFs (python_jobs/warehouse/spark_session.py). Where
    DuckDB has a macro with a default tolerance, Spark's numeric_match takes the tolerance always (the models pass
    it)."""
    from pyspark.sql.functions import pandas_udf

    for name, (fn, n_args) in SQL_FUNCTIONS.items():
        sql_functions.register(name, fn, _arrow_udf)
        spark.udf.register(name, pandas_udf(_pandas_rows(fn, n_args), "double"))
    sql_functions.register("numeric_match", numeric_match, register_duckdb_macros)
    sql_functions.register("first_words", first_words)
    spark.udf.register("numeric_match", pandas_udf(_pandas_rows(numeric_match, 3), "double"))
    spark.udf.register("first_words", pandas_udf(_pandas_rows(
        lambda text, n: first_words(text, None if n is None else int(n)), 2), "string"))


def register_duckdb_macros(conn) -> None:
    """Connection-local SQL macros over the UDFs (dbt-duckdb calls this for every cursor: temp macros do not carry
    over to cursors the way registered functions do)."""
    # a macro gives numeric_match the rules' default tolerance (Python UDFs take no default arguments)
    conn.execute(f"create or replace temp macro numeric_match(pred, gold, tolerance := {RULES.numeric_tolerance!r}) "
                 "as numeric_match_tol(pred, gold, tolerance)")
