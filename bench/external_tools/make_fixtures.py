"""Ragas and DeepEval files written (and our exports read back) by the real libraries, in a venv of their own.

    .venv/bin/python bench/external_tools/make_fixtures.py [--venv DIR] [--skip-write]

Neither ragas 0.4.3 nor deepeval 4.3.1 installs beside the project's pins (/work/shared/ENVIRONMENT.md "Ragas and
DeepEval"), so this script builds `<venv>` (default `.venv-external` in the checkout; nothing pulls torch) with
`pip install ragas==0.4.3 deepeval==4.3.1` and the packages their non-LLM metrics import, then, in that venv:

1. writes the fixtures under tests/fixtures/external_tools/ from six real FinanceBench questions, GPT-4's oracle
   answers to them (FinanceBench's results/gpt-4_oracle.jsonl) and their evidence texts as contexts:
   - ragas/evaluation_dataset.jsonl and .csv: `EvaluationDataset.to_jsonl` / `to_csv` of SingleTurnSamples;
   - ragas/results.csv: `ragas.evaluate(...)` run for real with the metrics that need no LLM (no LLM is reachable):
     non_llm_context_precision_with_reference, non_llm_context_recall, id_based_context_precision,
     id_based_context_recall, rouge_score; `EvaluationResult.to_pandas().to_csv(index=False)`;
   - ragas/experiments/gpt4_oracle_numbers.csv: a ragas experiment (`@experiment`, the local/csv backend) whose rows
     carry ragas' own RougeScore and a `@numeric_metric` (numbers_match, 0..1) with its reason column;
   - deepeval/latest_run_full.json: `deepeval.evaluate(...)` run for real, the `.deepeval/.latest_run_full.json` it
     writes, copied. Metrics: GEval "Correctness" judged by a local deterministic DeepEvalBaseLLM (token overlap of
     the answer with the expected output, 0-10: deepeval runs its real GEval pipeline around it), ExactMatchMetric,
     and a custom BaseMetric "Unsupported Numbers" (lower is better: success = score <= threshold) that raises on the
     one test case given without retrieval context, so the run holds a real `error` entry
     (ErrorConfig(ignore_errors=True)).
2. lands them with the project's `finrag` (this script's own interpreter: run it with the project's .venv python)
   in a scratch home, exports the runs with `finrag export-run --format ragas|deepeval`, and reads the exports back
   with the real libraries: `EvaluationDataset.from_jsonl` / `from_csv` and deepeval's `TestRun.model_validate`.
   Any failure exits non-zero.

CI never runs this (the venv takes minutes): the tests use the committed fixtures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve()
PROJECT = HERE.parents[2]
FIXTURES = PROJECT / "tests" / "fixtures" / "external_tools"
SHARED_DATA = Path(os.environ.get("FINRAG_SHARED_DATA", PROJECT.parent / "shared" / "data"))
# langchain-community 0.4 dropped chat_models.vertexai, which ragas 0.4.3 imports: pip would resolve it otherwise
PINS = ["ragas==0.4.3", "deepeval==4.3.1", "langchain-community==0.3.31", "rapidfuzz==3.14.6", "rouge_score==0.1.2",
        "sacrebleu==2.6.0"]
QUIET = {"RAGAS_DO_NOT_TRACK": "true", "DEEPEVAL_TELEMETRY_OPT_OUT": "1", "DEEPEVAL_NO_INSPECT_PROMPT": "1",
         "DEEPEVAL_UPDATE_WARNING_OPT_IN": "0", "DEEPEVAL_GRPC_LOGGING": "0", "HF_HUB_OFFLINE": "1",
         "TQDM_DISABLE": "1", "OPENAI_API_KEY": ""}
N_QUESTIONS = 6


# ------------------------------------------------------------------------------------------------ outside the venv
def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    stamp = venv / f".installed-{'-'.join(PINS)}"
    if not stamp.exists():
        if not python.exists():
            subprocess.run(["python3.11", "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PINS], check=True)
        stamp.touch()
    return python


def inside(python: Path, *args: str) -> None:
    subprocess.run([str(python), str(HERE), *args], check=True, env={**os.environ, **QUIET})


def finrag(home: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args], cwd=PROJECT,
                          capture_output=True, text=True, env={**os.environ, "FINRAG_HOME": str(home)})
    if proc.returncode != 0:
        sys.exit(f"finrag {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout.strip()


def export_ours(out: Path) -> None:
    """Land the fixtures in a scratch home and export every run in the tools' formats."""
    home = out / "home"
    home.mkdir()
    data = SHARED_DATA / "financebench" / "data"
    finrag(home, "ingest", "financebench", "--questions", str(data / "financebench_open_source.jsonl"),
           "--documents", str(data / "financebench_document_information.jsonl"))
    ragas_run = finrag(home, "ingest", "ragas", str(FIXTURES / "ragas" / "results.csv"), "--dataset", "financebench")
    deepeval_run = finrag(home, "ingest", "deepeval", str(FIXTURES / "deepeval" / "latest_run_full.json"),
                          "--dataset", "financebench")
    for run, fmt, name in ((ragas_run, "ragas", "ragas.jsonl"), (ragas_run, "ragas", "ragas.csv"),
                           (deepeval_run, "deepeval", "deepeval.json"), (ragas_run, "deepeval", "ragas_run.json"),
                           (deepeval_run, "ragas", "deepeval_run.jsonl")):
        finrag(home, "export-run", "--run-id", run, "--format", fmt, "--out", str(out / name))
    print(f"exported judge runs {ragas_run} and {deepeval_run}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=PROJECT / ".venv-external")
    parser.add_argument("--skip-write", action="store_true", help="keep the committed fixtures; only re-read exports")
    parser.add_argument("mode", nargs="?", default="all", choices=["all", "_write", "_check"])
    parser.add_argument("path", nargs="?", type=Path)
    args = parser.parse_args()
    if args.mode == "_write":
        write_fixtures(args.path)
        return
    if args.mode == "_check":
        check_exports(args.path)
        return
    python = ensure_venv(args.venv)
    if not args.skip_write:
        inside(python, "_write", str(FIXTURES))
    with tempfile.TemporaryDirectory() as tmp:
        export_ours(Path(tmp))
        inside(python, "_check", tmp)
    print("ok: fixtures written by ragas 0.4.3 / deepeval 4.3.1; our exports read back by both")


# ------------------------------------------------------------------------------------------------- inside the venv
def financebench_samples() -> list[dict]:
    """The first N FinanceBench questions with GPT-4's oracle answer, their evidence as the reference contexts, and
    as the retrieved contexts their evidence plus the next question's first evidence (a miss to rank below)."""
    data = SHARED_DATA / "financebench"
    questions = [json.loads(x) for x in (data / "data" / "financebench_open_source.jsonl").read_text().splitlines()
                 if x.strip()]
    oracle = (data / "results" / "gpt-4_oracle.jsonl").read_text().splitlines()
    answers = {a["financebench_id"]: a for a in map(json.loads, oracle)}
    picked = [q for q in questions if q["financebench_id"] in answers][: N_QUESTIONS + 1]
    out = []
    for q, nxt in zip(picked, picked[1:], strict=False):
        ev = [(f"{e['doc_name']}#page{e['evidence_page_num']}", e["evidence_text"]) for e in q["evidence"]]
        miss = nxt["evidence"][0]
        retrieved = [*ev, (f"{miss['doc_name']}#page{miss['evidence_page_num']}", miss["evidence_text"])]
        out.append({"financebench_id": q["financebench_id"], "user_input": q["question"],
                    "retrieved_contexts": [t for _, t in retrieved], "retrieved_context_ids": [i for i, _ in retrieved],
                    "reference_contexts": [t for _, t in ev], "reference_context_ids": [i for i, _ in ev],
                    "response": str(answers[q["financebench_id"]]["model_answer"]), "reference": str(q["answer"])})
    return out


def numbers(text: str) -> set[str]:
    import re

    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*\.?\d*", text)}


def token_f1(a: str, b: str) -> float:
    from collections import Counter

    x, y = Counter(a.lower().split()), Counter(b.lower().split())
    common = sum((x & y).values())
    if not common:
        return 0.0
    p, r = common / sum(x.values()), common / sum(y.values())
    return 2 * p * r / (p + r)


def write_fixtures(out: Path) -> None:
    import asyncio
    import shutil

    samples = financebench_samples()
    write_ragas(out / "ragas", samples, asyncio, shutil)
    write_deepeval(out.resolve() / "deepeval", samples, shutil)


def write_ragas(out: Path, samples: list[dict], asyncio, shutil) -> None:
    from ragas import EvaluationDataset, evaluate
    from ragas.dataset import Dataset
    from ragas.dataset_schema import SingleTurnSample
    from ragas.experiment import experiment
    from ragas.metrics import (
        IDBasedContextPrecision,
        IDBasedContextRecall,
        NonLLMContextPrecisionWithReference,
        NonLLMContextRecall,
        RougeScore,
        numeric_metric,
    )
    from ragas.metrics.result import MetricResult

    out.mkdir(parents=True, exist_ok=True)
    fields = set(SingleTurnSample.model_fields)
    dataset = EvaluationDataset(samples=[SingleTurnSample(**{k: v for k, v in s.items() if k in fields})
                                         for s in samples])
    dataset.to_jsonl(out / "evaluation_dataset.jsonl")
    dataset.to_csv(out / "evaluation_dataset.csv")
    @numeric_metric(name="numbers_match", allowed_values=(0.0, 1.0))
    def numbers_match(response: str, reference: str) -> MetricResult:
        want = numbers(reference)
        if not want:
            return MetricResult(value=1.0, reason="the reference holds no number")
        got = numbers(response) & want
        return MetricResult(value=len(got) / len(want), reason=f"{len(got)} of {len(want)} reference numbers")

    rouge = RougeScore()

    @experiment()
    async def gpt4_oracle(row: dict) -> dict:
        sample = SingleTurnSample(user_input=row["user_input"], response=row["response"], reference=row["reference"])
        match = await numbers_match.ascore(response=row["response"], reference=row["reference"])
        return {**row, "rouge_score": await rouge.single_turn_ascore(sample), "numbers_match": match.value,
                "numbers_match_reason": match.reason}

    source = Dataset(name="financebench_sample", backend="local/csv", root_dir=str(out))
    for s in samples:
        source.append({k: v for k, v in s.items() if k in ("user_input", "response", "reference",
                                                            "retrieved_contexts")})
    source.save()
    for old in (out / "experiments").glob("*"):
        old.unlink()
    # before evaluate(), which patches the event loop (nest_asyncio) so that a later asyncio.run fails
    asyncio.run(gpt4_oracle.arun(source, name="gpt4_oracle_numbers"))
    result = evaluate(dataset, metrics=[NonLLMContextPrecisionWithReference(), NonLLMContextRecall(),
                                        IDBasedContextPrecision(), IDBasedContextRecall(), RougeScore()],
                      show_progress=False, raise_exceptions=True)
    result.to_pandas().to_csv(out / "results.csv", index=False)
    print(f"ragas evaluate: {result}")

    shutil.rmtree(out / "datasets")  # the experiment's input, written by the backend: not a fixture
    print(f"ragas experiment: {sorted(p.name for p in (out / 'experiments').iterdir())}")


def write_deepeval(out: Path, samples: list[dict], shutil) -> None:
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig, ErrorConfig
    from deepeval.metrics import BaseMetric, ExactMatchMetric, GEval
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    class OverlapJudge(DeepEvalBaseLLM):
        """A deterministic local judge (no LLM is reachable): scores the answer 0-10 by its token F1 with the
        expected output, given in the evaluation prompt. deepeval's GEval runs its real pipeline around it."""

        def __init__(self) -> None:
            super().__init__(model="token-overlap-judge")

        def load_model(self):
            return self

        def get_model_name(self) -> str:
            return "token-overlap-judge"

        def generate(self, prompt: str, schema=None):
            actual = prompt.split("Actual Output:", 1)[-1].split("Expected Output:", 1)[0]
            expected = prompt.split("Expected Output:", 1)[-1].split("\n\n", 1)[0]
            score = round(10 * token_f1(actual, expected))
            reason = f"token overlap {score}/10 between the actual and the expected output"
            return schema(score=score, reason=reason) if schema else json.dumps({"score": score, "reason": reason})

        async def a_generate(self, prompt: str, schema=None):
            return self.generate(prompt, schema)

    class UnsupportedNumbers(BaseMetric):
        """Share of the answer's numbers found in no retrieval context (lower is better)."""

        def __init__(self, threshold: float = 0.5) -> None:
            self.threshold = threshold

        def measure(self, test_case: LLMTestCase, *args, **kwargs) -> float:
            if not test_case.retrieval_context:
                raise ValueError("Unsupported Numbers needs the retrieval_context of the test case")
            said = numbers(test_case.actual_output)
            seen = set().union(*(numbers(c) for c in test_case.retrieval_context or []))
            self.score = len(said - seen) / len(said) if said else 0.0
            self.reason = f"{len(said - seen)} of {len(said)} numbers of the answer are in no retrieved context"
            self.success = self.score <= self.threshold
            return self.score

        async def a_measure(self, test_case: LLMTestCase, *args, **kwargs) -> float:
            return self.measure(test_case)

        def is_successful(self) -> bool:
            return bool(self.success)

        @property
        def __name__(self):
            return "Unsupported Numbers"

    out.mkdir(parents=True, exist_ok=True)
    cases = [LLMTestCase(input=s["user_input"], actual_output=s["response"], expected_output=s["reference"],
                         # the last one answered closed book: Unsupported Numbers errs on it (an `error` entry)
                         retrieval_context=s["retrieved_contexts"] if i < len(samples) - 1 else None,
                         context=s["reference_contexts"],
                         name=s["financebench_id"], additional_metadata={"financebench_id": s["financebench_id"]})
             for i, s in enumerate(samples)]
    correctness = GEval(name="Correctness", model=OverlapJudge(), threshold=0.5,
                        evaluation_params=[LLMTestCaseParams.ACTUAL_OUTPUT, LLMTestCaseParams.EXPECTED_OUTPUT],
                        evaluation_steps=["Check whether the actual output states the facts of the expected output."])
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            evaluate(cases, metrics=[correctness, ExactMatchMetric(), UnsupportedNumbers()],
                     async_config=AsyncConfig(run_async=False),
                     display_config=DisplayConfig(print_results=False, show_indicator=False,
                                                  inspect_after_run=False),
                     error_config=ErrorConfig(ignore_errors=True))
            shutil.copy(Path(tmp) / ".deepeval" / ".latest_run_full.json", out / "latest_run_full.json")
        finally:
            os.chdir(cwd)
    run = json.loads((out / "latest_run_full.json").read_text())
    print(f"deepeval run: {len(run['testCases'])} test cases, metrics "
          f"{sorted({m['name'] for c in run['testCases'] for m in c['metricsData']})}")


def check_exports(folder: Path) -> None:
    """Read our exports with the real libraries; raise (exit non-zero) on any failure."""
    from deepeval.test_run.test_run import TestRun
    from ragas import EvaluationDataset

    for name in ("ragas.jsonl", "deepeval_run.jsonl"):
        ds = EvaluationDataset.from_jsonl(folder / name)
        assert len(ds) and all(s.user_input and s.response for s in ds), name
        print(f"ragas read {name}: {ds}")
    # ragas 0.4.3 writes CSV (to_csv: lists as Python reprs) but has no from_csv: read it as its users do, the list
    # columns through ast.literal_eval, then EvaluationDataset.from_pandas; its own CSV fixture reads the same way
    import ast

    from pandas import read_csv

    lists = ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids")
    for path in (folder / "ragas.csv", FIXTURES / "ragas" / "evaluation_dataset.csv"):
        frame = read_csv(path, converters={c: ast.literal_eval for c in lists}, keep_default_na=False)
        ds = EvaluationDataset.from_pandas(frame)
        assert len(ds) and all(isinstance(s.retrieved_contexts, list) for s in ds), path
        print(f"ragas read {path.name}: {ds}, columns {list(frame.columns)}")
    # the round trip through the real readers: our exports carry the fixtures' own values
    theirs = read_csv(FIXTURES / "ragas" / "results.csv", converters={c: ast.literal_eval for c in lists})
    ours = EvaluationDataset.from_jsonl(folder / "ragas.jsonl")
    mine = {json.loads(x)["user_input"]: json.loads(x) for x in (folder / "ragas.jsonl").read_text().splitlines()}
    assert {s.user_input for s in ours} == set(theirs["user_input"]), "ragas: other samples"
    for row in theirs.to_dict(orient="records"):
        assert mine[row["user_input"]]["retrieved_contexts"] == row["retrieved_contexts"], "ragas: contexts"
        for metric in [c for c in theirs.columns if c not in lists and c not in ("user_input", "response",
                                                                                 "reference")]:
            assert abs(mine[row["user_input"]][metric] - row[metric]) < 1e-12, f"ragas: {metric}"
    fixture = TestRun.model_validate(json.loads((FIXTURES / "deepeval" / "latest_run_full.json").read_text()))
    exported = TestRun.model_validate(json.loads((folder / "deepeval.json").read_text()))
    keyed = {(c.input, m.name): m for c in fixture.test_cases for m in c.metrics_data}
    for c in exported.test_cases:
        for m in c.metrics_data:
            t = keyed[(c.input, m.name)]
            assert (m.score, m.success, m.threshold, m.error, m.reason) == (t.score, t.success, t.threshold, t.error,
                                                                            t.reason), f"deepeval: {m.name}"
    print(f"round trip: {len(mine)} Ragas samples and {len(keyed)} DeepEval metric results equal the fixtures'")
    for name in ("deepeval.json", "ragas_run.json"):
        run = TestRun.model_validate(json.loads((folder / name).read_text()))
        assert run.test_cases and all(c.metrics_data for c in run.test_cases), name
        print(f"deepeval read {name}: {len(run.test_cases)} test cases, metrics "
              f"{sorted({m.name for c in run.test_cases for m in c.metrics_data})}")


if __name__ == "__main__":
    main()
