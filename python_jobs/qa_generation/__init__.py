"""OmniEval-style QA generation over an ingested corpus (`finrag generate-qa`, `export-inspection`,
`import-inspection`).

The pipeline is a chain of agents, each a versioned prompt under prompts/ (their name@hash12 go into the run id):

    qa_classify_v1        a sampled unit (a chunk, or one chunk per document) -> its most relevant leaf topic
    qa_<task>_v1          per task: extractive, multi_hop_calc / multi_hop_chain (task multi_hop), contrast,
                          long_form, conversational -> question, answer(s), from the passages the pipeline gave it
    qa_inspect_v1         the quality inspector: keep / drop with a score and a reason (lands in qa_inspections)

Every reply is parsed strictly (pydantic models over labelled lines, "Question: ..." / "Answer: ..."): a reply that
does not parse, copies the prompt's example, degenerates into repetition, or (extractive) whose answer is not in
the passage fails its instance with the reason, recorded in qa_generation_attempts; it never lands as a question.
The gold evidence of an instance is the chunks the pipeline gave the generator (never ids the model names), so the
retrieval metrics score generated instances at chunk, page and doc granularity.

Splits: a kept instance is 'gen_train' or 'gen_test' by a seeded hash of its question id (--test-fraction); an
instance the LLM inspector dropped lands with split 'dropped'. Human inspection (import-inspection) overrides the
LLM: score 1-2 -> 'dropped'; 3 -> the corrected text applied (original kept in meta); 4-5 -> kept; a human-accepted
instance whose seeded split is 'gen_test' becomes 'gen_human_test' (the human-annotated test set), the others
stay 'gen_train'. `apply_human` is the one place that rule lives: generate-qa applies it too, so a re-run keeps the
human verdicts."""
