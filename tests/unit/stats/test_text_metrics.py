"""The scalar text metrics (python_jobs/stats/text_metrics.py) against their reference libraries on real
FinanceBench answers, hand-worked numeric-match cases, and the same functions called from SQL as the dbt plugin
registers them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pytest
import sacrebleu
from rouge_score import rouge_scorer

from python_jobs.stats.text_metrics import (
    Amount,
    bleu,
    exact_match,
    first_words,
    lcs_length,
    numeric_gold,
    numeric_match,
    parse_amounts,
    register_duckdb_functions,
    rouge_l_f,
    token_f1,
)


@pytest.fixture(scope="module")
def fb_pairs(shared_data: Path) -> list[tuple[str, str]]:
    """(model answer, gold answer) pairs from FinanceBench's 16 labelled result files, plus evidence pairs."""
    pairs = []
    for f in sorted((shared_data / "financebench" / "results").glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            pairs.append((str(r["model_answer"]), str(r["gold_answer"])))
    rng = random.Random(7)
    sample = rng.sample(pairs, 400)
    questions = [json.loads(x) for x in
                 (shared_data / "financebench" / "data" / "financebench_open_source.jsonl").read_text().splitlines()]
    evidence = [e["evidence_text"] for q in questions for e in q["evidence"]]
    # long texts: a model answer against a whole evidence text, as the chunk-evidence overlap scores them
    sample += [(rng.choice(evidence), rng.choice(evidence)) for _ in range(40)]
    return sample


def test_rouge_l_equals_rouge_score_on_financebench(fb_pairs: list[tuple[str, str]]) -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    diffs = [abs(rouge_l_f(p, r) - scorer.score(r, p)["rougeL"].fmeasure) for p, r in fb_pairs]
    assert max(diffs) < 1e-12
    # not a degenerate sample: real overlaps of every size
    values = [rouge_l_f(p, r) for p, r in fb_pairs]
    assert min(values) == 0.0 and max(values) == 1.0 and 0.05 < sum(values) / len(values) < 0.5


def test_lcs_bit_parallel_equals_dynamic_programming() -> None:
    rng = random.Random(1)

    def dp(a, b):
        t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
        return t[-1][-1]

    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 90))]
        b = [rng.choice("abcdef") for _ in range(rng.randint(0, 90))]
        assert lcs_length(a, b) == dp(a, b)


def test_bleu_equals_sacrebleu_sentence_bleu(fb_pairs: list[tuple[str, str]]) -> None:
    for p, r in fb_pairs:
        assert bleu(p, r) == pytest.approx(min(1.0, sacrebleu.sentence_bleu(p, [r]).score / 100), abs=1e-12)
    assert bleu("the cat sat on the mat", "the cat sat on the mat") == 1.0
    assert bleu("completely different words", "the cat sat on the mat") == 0.0


def test_squad_token_f1_and_exact_match_hand_worked() -> None:
    assert exact_match("The Data Center.", "data center") == 1.0  # case, article, punctuation
    assert exact_match("Data Centre", "data center") == 0.0
    # pred "cat sat down" (3 tokens) vs ref "cat sat" (2): precision 2/3, recall 1 -> F1 0.8
    assert token_f1("The cat sat down", "a cat sat") == pytest.approx(0.8)
    assert token_f1("x", "y") == 0.0
    assert token_f1("", "") == 1.0 and token_f1("", "a cat") == 0.0  # SQuAD 2.0's empty-answer rule
    assert token_f1(None, "x") is None and exact_match("x", None) is None


@pytest.mark.parametrize("pred, gold, expected", [
    ("$1,577 million", "1.577 billion", 1.0),  # scale words
    ("Capex was 1.577 billion dollars in FY2018", "$1,577 million", 1.0),
    ("The margin changed by (12.5)%", "-12.5%", 1.0),  # parentheses are a negative number
    ("The margin changed by 12.5%", "-12.5%", 0.0),  # the sign matters
    ("EPS of $8.70", "8.70", 1.0),
    ("EPS of 8.7", "$8.70", 1.0),
    ("EPS of 8.97", "8.70", 0.0),  # 3.1 % off
    ("103", "100", 1.0),  # exactly 3 % relative
    ("103.5", "100", 0.0),
    ("1577", "$1577.00", 1.0),
    ("$1,577 million", "$1577.00", 1.0),  # compared as written when the gold omits the scale
    ("no numbers here", "24.26%", 0.0),
    ("0", "0", 1.0),
])
def test_numeric_match_hand_worked(pred: str, gold: str, expected: float) -> None:
    assert numeric_match(pred, gold) == expected


def test_numeric_gold_and_parsing() -> None:
    assert parse_amounts("$1,577 million") == [Amount(1577.0, 1577.0, 1e6)]
    assert parse_amounts("$1,577 million")[0].readings() == [(1.577e9, 1.577e9), (1577.0, 1577.0)]
    assert parse_amounts("(12.5)%") == [Amount(-12.5, -12.5, 1.0, percent=True)]
    assert parse_amounts("(12.5)%")[0].readings() == [(-12.5, -12.5), (-0.125, -0.125)]
    assert parse_amounts("$(1.2) billion") == [Amount(-1.2, -1.2, 1e9)]
    assert numeric_gold("$1577.00") == 1577.0
    assert numeric_gold("24.26%") == 24.26
    assert numeric_gold("1.9x") == 1.9
    # a sentence that merely holds a number is not a numeric answer: numeric match does not apply
    assert numeric_gold("87% of the total restructuring liability is related Employee liabilities.") is None
    assert numeric_gold("Data Center") is None
    assert numeric_match("87%", "87% of the total restructuring liability is related Employee liabilities.") is None
    assert numeric_match("8.8", "8.70", 0.02) == 1.0 and numeric_match("8.9", "8.70", 0.02) == 0.0


@pytest.mark.parametrize("pred, gold, expected", [
    ("3.2%", "0.032", 1.0),  # a percentage is also its fraction
    ("0.032", "3.2%", 1.0),
    ("In 2018 the company grew", "$2,000 million", 0.0),  # a year is not an amount (2018 is within 3 % of 2000)
    ("FY2022 was strong", "2,000", 0.0),
    ("10-12%", "11%", 1.0),  # a range holds 11 %
    ("10-12%", "-12%", 0.0),  # and is not "10" and "-12"
    ("(5.2%)", "-5.2%", 1.0),  # parentheses around a percentage: negative
    ("3M reported a loss", "$3 million", 0.0),  # the company, not 3 million
    ("3M's revenue was $32.2 billion", "$32.2 billion", 1.0),
    ("$3M", "3 million", 1.0),  # with a currency it is an amount
    ("a 12 m long pipe", "12,000,000", 0.0),  # a one-letter scale only glued to its number
    ("12m", "12,000,000", 1.0),
    ("the 10-K reports 7", "10", 0.0),  # a document type is not an amount
])
def test_numbers_that_used_to_mislead(pred: str, gold: str, expected: float) -> None:
    assert numeric_match(pred, gold) == expected


def test_what_is_not_an_amount() -> None:
    assert parse_amounts("In FY2018 and 2019, and over 2019-2021") == []
    assert numeric_gold("FY2022") is None and numeric_gold("10-12%") is None  # no amount; a range is no single gold
    assert parse_amounts("3M shares") == [Amount(3.0, 3.0, 1e6)]
    assert parse_amounts("revenue fell 5%-7%") == [Amount(5.0, 7.0, 1.0, percent=True)]


def test_first_words() -> None:
    text = " ".join(f"w{i}" for i in range(400))
    assert first_words(text, 300).split() == [f"w{i}" for i in range(300)]
    assert first_words("short answer", 300) == "short answer"
    assert first_words(text, None) == text


def test_sql_functions_are_the_python_functions(fb_pairs: list[tuple[str, str]]) -> None:
    con = duckdb.connect()
    register_duckdb_functions(con)
    register_duckdb_functions(con)  # idempotent: a second connection setup must not fail
    con.execute("create table pairs (pred varchar, ref varchar)")
    con.executemany("insert into pairs values (?, ?)", fb_pairs[:120] + [(None, "x")])
    rows = con.sql("select pred, ref, rouge_l_f(pred, ref), token_f1(pred, ref), exact_match(pred, ref), "
                   "bleu(pred, ref), numeric_match(pred, ref), numeric_match(pred, ref, 0.5) from pairs").fetchall()
    for pred, ref, r, f1, em, b, nm, nm50 in rows:
        assert (r, f1, em, b, nm, nm50) == (rouge_l_f(pred, ref), token_f1(pred, ref), exact_match(pred, ref),
                                            bleu(pred, ref), numeric_match(pred, ref), numeric_match(pred, ref, 0.5))
    assert rows[-1][2:] == (None,) * 6
    assert con.sql("select numeric_match('$1,577 million', '1.577 billion'), numeric_gold('(12.5)%'), "
                   "first_words('a b c', 2)").fetchall() == [(1.0, -12.5, "a b")]
