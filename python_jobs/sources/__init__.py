"""Readers of the benchmark formats, one module per format, and what every ingest shares.

    finrag ingest financebench --questions F --documents F --pdfs DIR [--dataset financebench]
    finrag ingest beir --dir DIR --dataset NAME
    finrag ingest trec-qrels FILE --dataset NAME
    finrag ingest trec-run FILE --dataset NAME --run-id ID [--format trec|financerag-csv] [--only-known-questions]
    finrag ingest financebench-answers DIR_OR_FILE... [--label-set financebench_human]
    finrag ingest ragas FILE|DIR --dataset NAME [--run-id ID] [--metric NAME=MIN..MAX[:lower]]...
    finrag ingest deepeval FILE --dataset NAME [--run-id ID]

Every ingest parses and checks all of its input first (pydantic per line: errors name file, line and field), then
lands all of its tables in ONE `Lake.land` call, so a failed load lands nothing. The partition value is the load id,
derived from the dataset name (or the run id), so re-running the same load replaces its own partitions and changes
no count.

Decisions (where the design is silent):
- Load ids: documents/pages/questions/evidence land in partition `<dataset>`; BEIR corpus chunks in
  `<dataset>.corpus` (chunker_id 'corpus', as `finrag chunk` names its partitions `<dataset>.<chunker_id>`); runs in
  `<run id>`; human labels in `<label set>` (re-ingesting some answer files replaces only those runs' labels).
  `trec-qrels` lands its evidence in `<dataset>` too: it replaces the qrels a `beir` load of the same dataset landed.
- FinanceRAG dataset names used by the tests and docs: financerag_finder, financerag_finqabench,
  financerag_financebench, financerag_tatqa, financerag_finqa, financerag_convfinqa, financerag_multihiertt.
- BEIR corpus entries: one document and one chunk each (chunk text = the entry's `text` as the corpus has it; the
  title stays on the document). doc_type is 'other' unless the title is a FinanceBench doc_name
  (`COMPANY_2022_10K`, `…_2023Q1_EARNINGS`, `…_8K_dated-2023-01-06`): then the filing's type and period.
- FinanceBench's document list names FOOTLOCKER_2023_annualreport twice (doc_period 2023 and 2022, same doc_link;
  the repo has one such PDF): a repeated doc_name with the same doc_link, company and type is a second record of
  one document. Both records land (all 361): the first under its doc_name, the repeat as `<doc_name>__line<N>`
  (questions and PDFs refer to the doc_name); a warning names both lines. A repeated doc_name for a different
  document is an error.
- FinanceBench `model_answer`/`gold_answer` may be numbers in the real files: accepted (answers store text).
- Ragas and DeepEval files (ragas_files.py, deepeval_runs.py): what they land as and why, in external_runs.py.
"""
