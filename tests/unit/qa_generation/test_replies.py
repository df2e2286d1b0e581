"""The agents' reply parsers (python_jobs/qa_generation/replies.py) on real SmolLM2-135M reply shapes seen on
FinanceBench (loops, missing labels, copied examples) and on well-formed replies; the seeded split; the human-verdict
rule."""

from __future__ import annotations

import json

import polars as pl
import pytest

from python_jobs.core.contracts import contract
from python_jobs.qa_generation.human_inspection import apply_human
from python_jobs.qa_generation.replies import (
    ReplyError,
    copies_example,
    cut_loop,
    grounded,
    load_agent,
    parse_generation,
    parse_topic,
    parse_verdict,
)
from python_jobs.qa_generation.tasks import KINDS, assigned_split
from python_jobs.qa_generation.topics import Topic, load_topics


def test_extractive_and_labels() -> None:
    g = parse_generation("extractive", "Sure! Here it is.\n**Question:** What was the value of the trade receivable "
                                       "in 2022?\n**Answer:** $ 8,983\n\nPassage: ...")
    assert (g.question, g.answers) == ("What was the value of the trade receivable in 2022?", ["$ 8,983"])
    with pytest.raises(ReplyError, match="no 'Answer:' line"):
        parse_generation("extractive", "Question: What is the difference between a fair value and fair value?")
    with pytest.raises(ReplyError, match="answer repeats the question"):
        parse_generation("extractive", "Question: What is the impact of changes in demand?\n"
                                       "Answer: What is the impact of changes in demand?")
    with pytest.raises(ReplyError, match="question: degenerate repetition"):
        parse_generation("extractive", "Question: What is the first amendment to the First Amendment to the First "
                                       "Amendment to the First Amendment to the First Amendment to the First\n"
                                       "Answer: x")
    with pytest.raises(ReplyError, match="at least 4 words"):
        parse_generation("extractive", "Question: Revenue?\nAnswer: $5")


def test_calc_chain_long_form() -> None:
    g = parse_generation("multi_hop_calc", "Question: What was the growth of revenue in 2023?\nAnswer: 6%\n"
                                           "Calculation: 3,410 / 3,217 - 1 = 6%")
    assert g.answers == ["6%"] and g.extra == {"calculation": "3,410 / 3,217 - 1 = 6%"}
    with pytest.raises(ReplyError, match="numeric answer"):
        parse_generation("multi_hop_calc", "Question: What was the growth of revenue in 2023?\nAnswer: strong")
    with pytest.raises(ReplyError, match="no 'Answer:' line"):
        parse_generation("multi_hop_chain", "Question: What is the total value of the contract liabilities?\n\n"
                                            "Reasoning: Passage 1 says the Company has a contract.")
    loop = ("The company uses credit cards to manage its credit card credit card. It has a credit card with a 100% "
            "of credit card credit card. It also has a credit card with a 100% of credit card credit card. It also "
            "has a credit card with a 100% of credit")
    g = parse_generation("long_form", f"Question: How does the company manage its credit cards?\nAnswer: {loop}")
    assert g.answers == ["The company uses credit cards to manage its credit card credit card. It has a credit card "
                         "with a 100% of credit card credit card."]
    with pytest.raises(ReplyError, match="at least 15 words"):
        parse_generation("long_form", "Question: How does the company manage its risk?\nAnswer: With hedges.")


def test_cut_loop_keeps_sentences_before_the_loop() -> None:
    assert cut_loop("A b c d e f g. H i j k. A b c d e f g again.") == "A b c d e f g. H i j k."
    assert cut_loop("One full sentence here. And a fragment cut by max") == "One full sentence here."
    assert cut_loop("Only a fragment") == "Only a fragment"


def test_conversation() -> None:
    reply = ("User: What was the trade receivable in 2022?\nAssistant: 8,983.\nUser: What was it in 2021?\n"
             "Assistant: 7,932.\nUser: What was the trade receivable in 2022?\nAssistant: 8,983.\nUser: What was")
    g = parse_generation("conversational", reply)  # stops at the first repeated user turn
    assert g.question == "What was it in 2021?" and g.answers == ["7,932."]
    assert g.conversation == [{"role": "user", "content": "What was the trade receivable in 2022?"},
                              {"role": "assistant", "content": "8,983."},
                              {"role": "user", "content": "What was it in 2021?"}]
    with pytest.raises(ReplyError, match="two user/assistant exchanges"):
        parse_generation("conversational", "User: What was the revenue?\nAssistant: $3 million.")
    with pytest.raises(ReplyError, match="turn 1 content: empty or a placeholder"):
        parse_generation("conversational", "User: ...\nAssistant: ...\nUser: ...\nAssistant: ...")
    with pytest.raises(ReplyError, match="turn 2 should be the assistant's"):
        parse_generation("conversational", "User: What was the revenue?\nUser: And the margin?\n"
                                           "Assistant: 5.\nAssistant: 6.")


def test_copied_examples_and_grounding() -> None:
    agent = load_agent("qa_extractive_v1")
    passage = "Net revenue was $5,120 million in 2023."
    copied_q = parse_generation("extractive", "Question: What was the revenue for fiscal 2023?\nAnswer: $5,120 million")
    assert copies_example(copied_q, agent, passage)
    copied_a = parse_generation("extractive", "Question: What was the net revenue of the firm?\nAnswer: $3,410 million")
    assert copies_example(copied_a, agent, passage) and not grounded("$3,410 million", passage)
    own = parse_generation("extractive", "Question: What was the net revenue of the firm?\nAnswer: $5,120 million")
    assert not copies_example(own, agent, passage) and grounded("$5,120 million", passage)
    # an example answer the passage really holds is not a copy
    assert not copies_example(copied_a, agent, "Revenue was $3,410 million.")


def test_paraphrased_examples_are_copies() -> None:
    """Two replies SmolLM2 gave on FinanceBench chunks: the example's answer reworded, nothing of the passage."""
    legal = ("however, that such beneficial ownership shall not constitute a Change in Control if it occurs as a "
             "result of any of the following acquisitions of securities: (A) any acquisition directly from Amex")
    contrast = parse_generation("contrast", "Question: Which company has the higher gross margin in 2024, and by "
                                            "how much?\nAnswer: The company of passage 1, with 41.2% against 35.8% "
                                            "of 2023.")
    assert copies_example(contrast, load_agent("qa_contrast_v1"), legal)
    signatures = ("Pursuant to the requirements of Section 13 of the Securities Exchange Act of 1934, the registrant "
                  "has duly caused this report to be signed on its behalf by the undersigned, "
                  "thereunto duly authorized")
    long_form = parse_generation("long_form", "Question: How does the company manage its foreign currency risk?\n"
                                              "Answer: The company uses forward contracts to hedge up to 18 months of "
                                              "forecast sales in foreign currencies. Gains and losses on these "
                                              "contracts are not recognised at once: they are deferred in other "
                                              "comprehensive income until the hedged sales take place.")
    assert copies_example(long_form, load_agent("qa_long_form_v1"), signatures)
    # the same answer over a passage that says it is the passage's, not the example's
    hedging = ("We hedge foreign currency sales with forward contracts for up to 18 months; gains and losses on "
               "these contracts are deferred in other comprehensive income until the hedged sales take place, and "
               "are not recognised at once in forecast currencies.")
    assert not copies_example(long_form, load_agent("qa_long_form_v1"), hedging)
    # the example's phrasing with the passages' own numbers is the format the example teaches, not a copy
    styled = parse_generation("contrast", "Question: Which company has the higher gross margin?\n"
                                          "Answer: The company of passage 1, with 44.7% against 39.1%.")
    assert not copies_example(styled, load_agent("qa_contrast_v1"), "[1] (doc A) Gross margin was 44.7%.\n"
                                                                     "[2] (doc B) Gross margin was 39.1%.")
    own = parse_generation("contrast", "Question: Which company had the larger pension obligation?\n"
                                       "Answer: Boeing, whose pension obligation of $53.6 billion exceeds 3M's.")
    assert not copies_example(own, load_agent("qa_contrast_v1"), "Boeing's pension obligation was $53.6 billion. "
                                                                  "3M's pension obligation was $14.2 billion.")


def test_verdicts() -> None:
    v = parse_verdict("Verdict: keep\nScore: 4\nReason: The passage states it.")
    assert (v.verdict, v.score, v.reason) == ("keep", 4, "The passage states it.")
    assert parse_verdict("Verdict: **Drop**\nReason: unsupported").verdict == "drop"
    assert parse_verdict("Verdict: drop\nScore: 2/5").score == 2
    with pytest.raises(ReplyError, match="verdict must be keep or drop, got '2.5%'"):
        parse_verdict("Verdict: 2.5%\n\nThe growth rate of our current business is 2.5%.")
    with pytest.raises(ReplyError, match="score must be 1 to 5"):
        parse_verdict("Verdict: keep\nScore: 9")
    with pytest.raises(ReplyError, match="no 'Verdict:' line"):
        parse_verdict("The answer is correct. The answer is correct.")


def test_topics() -> None:
    topics = load_topics()
    assert len(topics) == 33 and all(t.topic_id.count("/") >= 1 for t in topics)
    assert parse_topic("Topic: Credit cards", topics).topic_id == "银行业务/零售银行/信用卡"
    # the earliest name wins; a longer name beats its prefix at the same place
    assert parse_topic("The topic that best fits is \"Corporate Bonds\", not Stock analysis", topics).name_en == \
        "Corporate bonds"
    assert parse_topic("Topic: Exchange-traded funds (ETF)", topics).name_en == "Exchange-traded funds (ETF)"
    with pytest.raises(ReplyError, match="names no topic"):
        parse_topic("Topic: Corporate Governance", topics)


def test_seeded_split_is_stable_and_near_the_fraction() -> None:
    ids = [f"gen-{i:012x}" for i in range(2000)]
    splits = [assigned_split(q, 7, 0.3) for q in ids]
    assert splits == [assigned_split(q, 7, 0.3) for q in ids]
    assert 0.27 < splits.count("gen_test") / len(ids) < 0.33
    assert splits != [assigned_split(q, 8, 0.3) for q in ids]
    assert {assigned_split(q, 7, 0.0) for q in ids[:50]} == {"gen_train"}


# a questions partition as the lake holds it: the human verdict columns are there, empty
NOT_INSPECTED = {"human_verdict": None, "human_score": None, "human_inspection_run_id": None}


def _questions() -> pl.DataFrame:
    meta = {"generation_run_id": "g", "assigned_split": "gen_test", "llm_split": "gen_test"}
    return contract("questions").frame([
        {"question_id": "q1", "dataset": "d", "split": "gen_test", "question": "What was it?",
         "reference_answers": ["a"],
         "task": "conversational", "topic_path": ["x"], "question_type": "conversational", "question_reasoning": None,
         "conversation": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Yes."},
                          {"role": "user", "content": "What was it?"}],
         "source": "generated", "meta": json.dumps(meta, sort_keys=True), **NOT_INSPECTED},
        {"question_id": "q2", "dataset": "d", "split": "dropped", "question": "Why?", "reference_answers": ["b"],
         "task": "long_form", "topic_path": ["x"], "question_type": "long_form", "question_reasoning": None,
         "conversation": None, "source": "generated", **NOT_INSPECTED,
         "meta": json.dumps({**meta, "assigned_split": "gen_train", "llm_split": "dropped"}, sort_keys=True)},
    ])


def _human(rows: list[tuple[str, str, int, str | None, str | None]]) -> pl.DataFrame:
    return pl.DataFrame([{"question_id": q, "verdict": v, "score": s, "inspection_run_id": "h1",
                          "corrected_question": cq, "corrected_answer": ca} for q, v, s, cq, ca in rows])


def test_apply_human_fix_keep_drop_and_idempotence() -> None:
    qs = _questions()
    human = _human([("q1", "fix", 3, "What was it, exactly?", "b2"), ("q2", "keep", 5, None, None)])
    once = apply_human(qs, human)
    q1, q2 = once.row(0, named=True), once.row(1, named=True)
    assert (q1["split"], q1["question"], q1["reference_answers"]) == ("gen_human_test", "What was it, exactly?", ["b2"])
    assert q1["conversation"][-1] == {"role": "user", "content": "What was it, exactly?"}
    assert json.loads(q1["meta"])["original_question"] == "What was it?"
    # a human keep overrides the LLM's drop; its seeded split is train
    assert q2["split"] == "gen_train" and q2["human_verdict"] == "keep"
    assert apply_human(once, human).equals(once)
    # a later verdict replaces the earlier one, from the original text
    redo = apply_human(once, _human([("q1", "drop", 1, None, None)]))
    r1 = redo.row(0, named=True)
    assert (r1["split"], r1["question"], r1["reference_answers"]) == ("dropped", "What was it?", ["a"])
    assert "original_question" not in json.loads(r1["meta"])
    # no human verdict at all: back to the LLM's split
    assert apply_human(once, pl.DataFrame(schema=human.schema)).equals(qs)


def test_topic_path() -> None:
    assert Topic("a/b/c", "c", "C").path == ["a", "b", "c"]


def test_structured_replies_read_as_their_labels() -> None:
    """Under structured output (the agents' response_format) a reply is one JSON object whose keys are the labels;
    the same strict rules apply to its values."""
    g = parse_generation("extractive", '{"question": "Question: What was the value of the trade receivable in 2022?", '
                                       '"answer": "$ 8,983"}')
    assert (g.question, g.answers) == ("What was the value of the trade receivable in 2022?", ["$ 8,983"])
    g = parse_generation("multi_hop_calc", json.dumps({"question": "What was the growth of revenue in 2023?",
                                                       "answer": "6%", "calculation": "3,410 / 3,217 - 1 = 6%"}))
    assert g.answers == ["6%"] and g.extra == {"calculation": "3,410 / 3,217 - 1 = 6%"}
    with pytest.raises(ReplyError, match="at least 4 words"):
        parse_generation("extractive", '{"question": "Revenue?", "answer": "$5"}')
    conv = {"turns": [{"user": "What was the trade receivable in 2022?", "assistant": "8,983."},
                      {"user": "What was it in 2021?", "assistant": "7,932."}]}
    g = parse_generation("conversational", json.dumps(conv))
    assert g.question == "What was it in 2021?" and g.answers == ["7,932."]
    assert [t["role"] for t in g.conversation or []] == ["user", "assistant", "user"]
    v = parse_verdict('{"verdict": "keep", "score": 4, "reason": "The passage states it."}')
    assert (v.verdict, v.score, v.reason) == ("keep", 4, "The passage states it.")
    assert parse_topic('{"topic": "Corporate bonds"}', load_topics()).name_en == "Corporate bonds"
    # a reply cut before its object closed is no object: read as lines, it has no label either
    with pytest.raises(ReplyError, match="no 'Question:' line"):
        parse_generation("extractive", '{"question": "What was the value of the trade receivable in')


def test_reply_schemas_admit_what_the_parsers_accept() -> None:
    import jsonschema

    from python_jobs.qa_generation.replies import REPLY_SCHEMAS, reply_format

    topics = load_topics()
    classify = reply_format("classify", topics)
    assert classify is not None and classify["json_schema"]["schema"]["properties"]["topic"]["enum"] == [
        t.name_en for t in topics]
    assert reply_format("no_such_agent") is None
    good = {
        "extractive": {"question": "What was the revenue for fiscal 2023?", "answer": "$3,410 million"},
        "inspect": {"verdict": "drop", "score": 1, "reason": "The passage does not mention employees."},
        "conversational": {"turns": [{"user": "What was the revenue in 2023?", "assistant": "$3,410 million."},
                                     {"user": "And the year before?", "assistant": "$3,217 million."}]},
    }
    for agent, obj in good.items():
        schema = reply_format(agent)["json_schema"]["schema"]  # type: ignore[index]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert jsonschema.Draft202012Validator(schema).is_valid(obj), agent
    assert set(REPLY_SCHEMAS) == {k for kinds in KINDS.values() for k in kinds} | {"inspect"}  # every generator
    inspect = jsonschema.Draft202012Validator(REPLY_SCHEMAS["inspect"])
    assert not inspect.is_valid({**good["inspect"], "score": 6}) and not inspect.is_valid({**good["inspect"],
                                                                                          "verdict": "maybe"})
    assert not jsonschema.Draft202012Validator(REPLY_SCHEMAS["extractive"]).is_valid(
        {"question": "What was the revenue for fiscal 2023?", "answer": "x" * 81})
