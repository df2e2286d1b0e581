"""`finrag ingest`: load benchmark files as they are into the lake (SPEC §4, §7, §8).

    finrag ingest financebench --questions F --documents F --pdfs DIR [--dataset financebench]
    finrag ingest beir --dir DIR --dataset NAME
    finrag ingest trec-qrels FILE --dataset NAME
    finrag ingest trec-run FILE --dataset NAME --run-id ID [--format trec|financerag-csv] [--only-known-questions]
    finrag ingest financebench-answers DIR_OR_FILE... [--label-set financebench_human]
    finrag ingest ragas FILE|DIR --dataset NAME [--run-id ID] [--model M] [--metric NAME=MIN..MAX[:lower]]...
    finrag ingest deepeval FILE --dataset NAME [--run-id ID] [--model M]
    finrag ingest traces-otlp FILE... [--dataset production] [--window 1d] [--version-attribute service.version]
        [--metric NAME=MIN..MAX[:lower]]... [--label-set NAME] [--dry-run]
    finrag ingest traces-langfuse FILE_OR_DIR... [the same options; --version-attribute release]
    finrag ingest traces-mlflow --tracking-uri URI --experiment NAME [--filter F] [the same options;
        --version-attribute app_version]
    finrag ingest traces-phoenix [--endpoint URL] [--project NAME] [the same options]

The rules and decisions are documented in python_jobs/sources/ (one module per format).
"""

from __future__ import annotations

from pathlib import Path

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.sources.beir import ingest_beir
from python_jobs.sources.deepeval_runs import ingest_deepeval
from python_jobs.sources.financebench import ingest_financebench, ingest_financebench_answers
from python_jobs.sources.langfuse_exports import ingest_langfuse
from python_jobs.sources.mlflow_traces import ingest_mlflow
from python_jobs.sources.otlp_traces import ingest_otlp
from python_jobs.sources.phoenix_traces import ingest_phoenix
from python_jobs.sources.ragas_files import ingest_ragas
from python_jobs.sources.traces import TraceOptions, TraceSummary, parse_trace_metric, parse_window
from python_jobs.sources.trec import ingest_trec_qrels, ingest_trec_run


@click.group("ingest")
def command() -> None:
    """Load benchmark files (FinanceBench, BEIR/FinanceRAG, TREC qrels and runs, FinanceBench answers, Ragas and
    DeepEval results) and production traces (traces-*) into the lake."""


@command.command("financebench")
@produces
@click.option("--questions", "questions_path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="financebench_open_source.jsonl")
@click.option("--documents", "documents_path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="financebench_document_information.jsonl")
@click.option("--pdfs", "pdf_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Directory of <doc_name>.pdf files (any subset of the documents).")
@click.option("--dataset", default="financebench", show_default=True, help="Dataset name (also the load id).")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 2), help="pypdf processes.")
def financebench_cmd(questions_path: Path, documents_path: Path, pdf_dir: Path | None, dataset: str,
                     workers: int) -> Produced:
    """FinanceBench questions, document metadata and PDFs → documents, pages, questions, evidence."""
    ingest_financebench(Lake(), questions_path=questions_path, documents_path=documents_path, pdf_dir=pdf_dir,
                        dataset=dataset, workers=workers)
    return dataset, {"load_id": dataset}


@command.command("beir")
@produces
@click.option("--dir", "src", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="corpus.jsonl (optional), queries.jsonl, qrels.tsv (query_id, corpus_id, score).")
@click.option("--dataset", required=True, help="Dataset name, also the load id (e.g. financerag_finder).")
def beir_cmd(src: Path, dataset: str) -> Produced:
    """A BEIR / FinanceRAG dataset → documents + chunks (corpus), questions (queries), evidence (qrels)."""
    ingest_beir(Lake(), src=src, dataset=dataset)
    return dataset, {"load_id": dataset}


@command.command("trec-qrels")
@produces
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset name; the qrels land as its evidence (load id = dataset).")
def trec_qrels_cmd(path: Path, dataset: str) -> Produced:
    """TREC qrels (`topic iter docno rel`) → evidence with graded relevance (0 and negative grades kept)."""
    ingest_trec_qrels(Lake(), path=path, dataset=dataset)
    return dataset, {"load_id": dataset}


@command.command("trec-run")
@produces
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True)
@click.option("--run-id", required=True, help="Run id (the partition; re-ingesting it replaces the run).")
@click.option("--format", "fmt", type=click.Choice(["trec", "financerag-csv"]), default="trec", show_default=True,
              help="trec: `topic Q0 docno rank score tag`; financerag-csv: `query_id,corpus_id` in rank order.")
@click.option("--only-known-questions", is_flag=True,
              help="Keep only rows whose question belongs to --dataset (a run file spanning several datasets).")
@click.option("--replace", is_flag=True,
              help="Replace the run even when --run-id belongs to another dataset (refused without it).")
def trec_run_cmd(path: Path, dataset: str, run_id: str, fmt: str, only_known_questions: bool,
                 replace: bool) -> Produced:
    """An external run → retrieval_runs (source 'trec') + retrieval_results (rank = line order per question)."""
    ingest_trec_run(Lake(replace_other_datasets=replace), path=path, dataset=dataset, run_id=run_id, fmt=fmt,
                    only_known_questions=only_known_questions)
    return run_id, {"run_id": run_id}


@command.command("financebench-answers")
@produces
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--label-set", default="financebench_human", show_default=True)
@click.option("--dataset", default="financebench", show_default=True,
              help="Dataset of the questions; when it is in the lake, every answer must name one of its questions.")
def financebench_answers_cmd(paths: tuple[Path, ...], label_set: str,
                             dataset: str) -> Produced:
    """FinanceBench results/*.jsonl → generation_runs (one per file), answers, human_labels (correctness); prints
    the answer runs' ids."""
    run_ids = ingest_financebench_answers(Lake(), paths=paths, label_set=label_set, dataset=dataset)
    return run_ids, {"run_ids": run_ids, "label_set": label_set}


def _external_produced(landed: list[tuple[str, str | None]]) -> Produced:
    """Each file's judge run id when it carried scores, else its answer run id."""
    ids = [judge or answer for answer, judge in landed]
    return (ids[0] if len(ids) == 1 else ids), {"answer_run_ids": [a for a, _ in landed],
                                                "judge_run_ids": [j for _, j in landed if j]}


_external_options = [
    click.option("--dataset", required=True,
                 help="Dataset whose questions the samples are matched to by text (new ones are created in it)."),
    click.option("--run-id", default=None, help="The answer run's id (default: the file name); the judge run is "
                                                "<run id>-<tool>."),
    click.option("--model", default="unknown", show_default=True, help="The model that wrote the answers."),
]


def _with_external_options(fn):
    for option in reversed(_external_options):
        fn = option(fn)
    return fn


@command.command("ragas")
@produces
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@_with_external_options
@click.option("--metric", "metrics", multiple=True, metavar="NAME=MIN..MAX[:lower]",
              help="Declare a metric column the registry does not know (e.g. numbers_match=0..1).")
def ragas_cmd(path: Path, dataset: str, run_id: str | None, model: str, metrics: tuple[str, ...]) -> Produced:
    """A Ragas EvaluationDataset / results / experiment file (or a folder of experiments) → an answer run and, with
    metric columns, a judge run; prints the judge run (else answer run) id of each file."""
    return _external_produced(ingest_ragas(Lake(), path=path, dataset=dataset, run_id=run_id, model=model,
                                           metric_options=metrics))


@command.command("deepeval")
@produces
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_with_external_options
def deepeval_cmd(path: Path, dataset: str, run_id: str | None, model: str) -> Produced:
    """A DeepEval test run (.deepeval/.latest_run_full.json, test_run_<stamp>.json) → an answer run and a judge run
    of its metricsData; prints the judge run (else answer run) id."""
    return _external_produced(ingest_deepeval(Lake(), path=path, dataset=dataset, run_id=run_id, model=model))


def _trace_options(fn):
    options = [
        click.option("--dataset", default="production", show_default=True,
                     help="The dataset the traces' questions land in (one question per trace)."),
        click.option("--window", default="1d", show_default=True, metavar="30m|6h|1d|7d",
                     help="The time window a production run covers (UTC, aligned on the epoch)."),
        click.option("--version-attribute", default=None,
                     help="The attribute that names the application version (default: OTLP's resource "
                          "service.version, Langfuse's trace release, MLflow's trace metadata app_version, "
                          "Phoenix's root span service.version)."),
        click.option("--metric", "metrics", multiple=True, metavar="NAME=MIN..MAX[:lower]",
                     help="An evaluation's scale (default 0..1, higher is better), by its name as the traces write "
                          "it."),
        click.option("--label-set", default=None,
                     help="The human label set of the annotations (default <dataset>_<format>_human)."),
        click.option("--dry-run", is_flag=True, help="Read and check everything; say what would land; land nothing."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _traces_produced(summary: TraceSummary, dry_run: bool) -> Produced:
    for line in summary.lines():
        say(("would land: " if dry_run and line.startswith("  ") else "") + line)
    ids = [r["run_id"] for r in summary.runs]
    return (ids[0] if len(ids) == 1 else ids), {"run_ids": ids, "dry_run": dry_run, "partitions": len(summary.landed)}


VERSION_ATTRIBUTES = {"otlp": "service.version", "langfuse": "release", "mlflow": "app_version",
                      "phoenix": "service.version"}


def _trace_opts(tool: str, dataset: str, window: str, version_attribute: str | None, metrics: tuple[str, ...],
                label_set: str | None) -> TraceOptions:
    return TraceOptions(tool=tool, dataset=dataset, window=parse_window(window),
                        version_attribute=version_attribute or VERSION_ATTRIBUTES[tool],
                        declarations=dict(parse_trace_metric(m) for m in metrics), label_set=label_set)


@command.command("traces-otlp")
@produces
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_trace_options
def traces_otlp_cmd(paths: tuple[Path, ...], dataset: str, window: str, version_attribute: str | None,
                    metrics: tuple[str, ...], label_set: str | None, dry_run: bool) -> Produced:
    """OTLP/JSON files (the Collector's file exporter: spans under the GenAI or OpenInference conventions, and the
    gen_ai.evaluation.result logs) → production runs: questions, retrieval results, answers and the LLM ledger,
    judgments, human labels; prints each run's id."""
    opts = _trace_opts("otlp", dataset, window, version_attribute, metrics, label_set)
    return _traces_produced(ingest_otlp(Lake(), list(paths), opts, dry_run=dry_run), dry_run)


@command.command("traces-langfuse")
@produces
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@_trace_options
def traces_langfuse_cmd(paths: tuple[Path, ...], dataset: str, window: str, version_attribute: str | None,
                        metrics: tuple[str, ...], label_set: str | None, dry_run: bool) -> Produced:
    """Langfuse blob-storage exports (Parquet or JSONL files, or their folder: observations_v2/ or traces/ +
    observations/, and scores/) → production runs: questions, retrieval results, answers and the LLM ledger,
    judgments (EVAL, API scores), human labels (ANNOTATION scores); prints each run's id."""
    opts = _trace_opts("langfuse", dataset, window, version_attribute, metrics, label_set)
    return _traces_produced(ingest_langfuse(Lake(), list(paths), opts, dry_run=dry_run), dry_run)


@command.command("traces-mlflow")
@produces
@click.option("--tracking-uri", required=True, envvar="MLFLOW_TRACKING_URI", show_envvar=True,
              help="The MLflow tracking store: sqlite:///path/mlflow.db, or a tracking server's http(s) URL.")
@click.option("--experiment", required=True, envvar="MLFLOW_EXPERIMENT_NAME", show_envvar=True,
              help="The experiment whose traces land (its name, or its id).")
@click.option("--filter", "filter_string", default=None,
              help="An MLflow search_traces filter (e.g. \"tags.environment = 'production'\"): only the traces it "
                   "matches land.")
@_trace_options
def traces_mlflow_cmd(tracking_uri: str, experiment: str, filter_string: str | None, dataset: str, window: str,
                      version_attribute: str | None, metrics: tuple[str, ...], label_set: str | None,
                      dry_run: bool) -> Produced:
    """MLflow traces with their assessments, read from a tracking store (a local sqlite store or a tracking server)
    → production runs: questions, retrieval results (RETRIEVER spans), answers (the LLM span) and the LLM ledger,
    judgments (LLM_JUDGE, CODE feedback), human labels (HUMAN feedback); prints each run's id."""
    opts = _trace_opts("mlflow", dataset, window, version_attribute, metrics, label_set)
    return _traces_produced(ingest_mlflow(Lake(), tracking_uri, experiment, opts, filter_string=filter_string,
                                          dry_run=dry_run), dry_run)
@command.command("traces-phoenix")
@produces
@click.option("--endpoint", default=None, metavar="URL",
              help="The running Phoenix's URL (default: PHOENIX_BASE_URL, else http://localhost:6006); "
                   "PHOENIX_API_KEY when it asks for one.")
@click.option("--project", default="default", show_default=True, help="The Phoenix project whose traces land.")
@_trace_options
def traces_phoenix_cmd(endpoint: str | None, project: str, dataset: str, window: str, version_attribute: str | None,
                       metrics: tuple[str, ...], label_set: str | None, dry_run: bool) -> Produced:
    """A running Arize Phoenix's project, pulled through its client: OpenInference spans and span annotations
    (annotator_kind LLM, CODE: judgments; HUMAN: human labels) → production runs: questions, retrieval results,
    answers and the LLM ledger, judgments, human labels; prints each run's id."""
    opts = _trace_opts("phoenix", dataset, window, version_attribute, metrics, label_set)
    return _traces_produced(ingest_phoenix(Lake(), endpoint, project, opts, dry_run=dry_run), dry_run)
