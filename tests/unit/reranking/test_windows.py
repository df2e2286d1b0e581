"""Page windows (python_jobs/page_scoring/windows.py) with the packaged MiniLM's real tokenizer: the split (every
window fits the model with its question, the windows cover the body in order and overlap by the stride, no word is
cut, a page that fits is one window), the evidence window (found by its first words, by its words, or the first
window) and MaxP. No model is run."""

from __future__ import annotations

import pytest

from python_jobs.corpus.encoders import default_model_path
from python_jobs.page_scoring.windows import MIN_BODY, PageWindows, load_tokenizer, max_by, split_label, words

LABEL = "Acme 10-K 2022"
FILLER = " ".join(f"segment{i} reported unremarkable figures" for i in range(40))
EVIDENCE = "Capital expenditures for property, plant and equipment were 1,577 million in fiscal 2018."
PAGE = f"{LABEL} | {FILLER} {EVIDENCE} Further unremarkable closing sentences follow the statement here."
QUESTION = "What was Acme's capital expenditure in 2018?"


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(default_model_path())


def pieces(tok, text: str) -> list[int]:
    return tok(text, add_special_tokens=False)["input_ids"]


def test_windows_fit_the_model_cover_the_body_and_overlap_by_the_stride(tok):
    pw = PageWindows(tok, 64, 0.5)
    wins = pw.windows(QUESTION, PAGE)
    _, body = split_label(PAGE, True)
    assert len(wins) > 5
    budget = 64 - 3 - len(pieces(tok, QUESTION)) - len(pieces(tok, LABEL + " | "))
    assert budget == pw.budget(QUESTION, LABEL) >= MIN_BODY
    for w in wins:
        assert w.text == f"{LABEL} | {body[w.start:w.end]}"
        # the pair as the model reads it: [CLS] question [SEP] window [SEP] within max_length
        assert len(tok(QUESTION, w.text)["input_ids"]) <= 64
        assert len(pieces(tok, body[w.start:w.end])) <= budget
        # no word is cut: a window starts and ends on a word boundary
        assert (w.start == 0 or not body[w.start - 1].isalnum()) and (w.end == len(body) or not body[w.end].isalnum())
    assert wins[0].start == 0 and wins[-1].end == len(body)
    for i, (a, b) in enumerate(zip(wins, wins[1:], strict=False)):
        assert a.start < b.start < a.end <= b.end  # in order, each overlapping the next
        shared = len(pieces(tok, body[b.start:a.end]))
        if i < len(wins) - 2:  # the last window ends the body: its overlap is what is left
            assert budget * 0.5 - 6 <= shared <= budget * 0.5 + 6  # half a window, give or take a word's pieces
    assert PageWindows(tok, 64, 1.0).windows(QUESTION, PAGE)[1].start >= wins[2].start - 8  # stride 1: no overlap
    # deterministic, and a page that fits is one window: the page itself
    assert pw.windows(QUESTION, PAGE) == wins
    short = f"{LABEL} | {EVIDENCE}"
    assert [w.text for w in pw.windows(QUESTION, short)] == [short]
    assert [w.text for w in PageWindows(tok, 64, 0.5, labelled=False).windows(QUESTION, EVIDENCE)] == [EVIDENCE]
    with pytest.raises(ValueError, match="stride"):
        PageWindows(tok, 64, 0.0)


def test_the_evidence_window_is_found_by_its_first_words_else_its_words_else_the_first(tok):
    pw = PageWindows(tok, 64, 0.5)
    wins = pw.windows(QUESTION, PAGE)
    _, body = split_label(PAGE, True)
    at = body.index(EVIDENCE)
    # the first words, whatever their case, spacing and punctuation
    given = "capital  EXPENDITURES for property plant and equipment were 1,577"
    got, how = pw.evidence_window(QUESTION, PAGE, given)
    assert how == "match" and got in wins and got.start <= at < got.end
    # the window holding the most of it: every window holding all of it is as good; the earliest of those
    end = body.index("1,577") + len("1,577")
    full = [w for w in wins if w.start <= at and end <= w.end]
    assert full and got == full[0]
    # not found word for word (reordered): the window that shares most of its words
    got, how = pw.evidence_window(QUESTION, PAGE, "were 1,577 million: expenditures capital plant property fiscal")
    assert how == "overlap" and got.start <= at + 10 < got.end
    # nothing of it in the page: the first window
    assert pw.evidence_window(QUESTION, PAGE, "zebra quokka narwhal") == (wins[0], "first")
    assert pw.evidence_window(QUESTION, PAGE, "") == (wins[0], "first")


def test_maxp_takes_each_pages_best_window_and_words_normalise():
    owners = [("A", 1), ("A", 1), ("B", 2), ("A", 1), ("B", 2)]
    assert max_by(owners, [0.1, 0.7, -0.2, 0.3, -0.5]) == {("A", 1): 0.7, ("B", 2): -0.2}
    assert [w for w, _, _ in words("Net  Revenue: $1,577.0M")] == ["net", "revenue", "1", "577", "0m"]
