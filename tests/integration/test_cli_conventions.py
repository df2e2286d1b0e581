"""What every verb shares: --quiet / --verbose on each verb and sub-verb, and the output of the verbs that produce
something (stdout is its id alone, or one JSON object with --json; notes go to stderr)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from python_jobs.cli import VERBS, cli
from support.cli import MODELS_ONLY

# the verbs that land something with an id (a run, a load, a training, a chunking, an index, a sweep)
PRODUCING = {"ingest financebench", "ingest beir", "ingest trec-qrels", "ingest trec-run",
             "ingest financebench-answers", "chunk", "index", "retrieve", "answer", "import-answers", "judge",
             "import-human-labels", "generate-qa", "import-inspection", "train-page-scorer", "train-reranker", "sweep",
             "ingest ragas", "ingest deepeval", "calibrate", "ingest traces-otlp", "ingest traces-langfuse",
             "ingest traces-mlflow", "ingest traces-phoenix", "label-next"}


def every_verb() -> dict[str, click.Command]:
    ctx = click.Context(cli)
    out: dict[str, click.Command] = {}
    for name in VERBS:
        cmd = cli.get_command(ctx, name)
        subs = cmd.commands if isinstance(cmd, click.Group) else {"": cmd}
        out.update({f"{name} {sub}".strip(): c for sub, c in subs.items()})
    return out


def test_every_verb_takes_quiet_and_verbose_and_every_producing_verb_json() -> None:
    verbs = every_verb()
    assert PRODUCING <= set(verbs)
    for name, cmd in verbs.items():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert {"--quiet", "-q", "--verbose", "-v"} <= opts, name
        assert ("--json" in opts) == (name in PRODUCING), name


def test_stdout_is_the_id_alone_or_json_and_quiet_keeps_stderr_clean(home: Path, finrag, shared_data: Path) -> None:
    fixtures = shared_data / "trec_eval_fixtures"
    qrels = finrag("ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "tf")
    assert qrels.stdout == "tf\n" and "landed evidence load_id=tf" in qrels.stderr
    run = ("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "tf", "--run-id", "r1")
    plain = finrag(*run)
    assert plain.stdout == "r1\n" and "run r1: " in plain.stderr  # the notes stay on stderr
    assert json.loads(finrag(*run, "--json").stdout) == {"run_id": "r1"}
    quiet = finrag(*run, "--quiet")
    assert (quiet.stdout, quiet.stderr) == ("r1\n", "")
    assert finrag(*run, "-q").stderr == ""

    built = finrag("build", "--quiet", "--no-publish", *MODELS_ONLY)
    assert "START" not in built.stdout and built.stderr == ""  # dbt's errors only, and no note
    verbose = finrag("build", "--verbose", "--no-publish", "--select", "dim_metrics")
    # dbt's debug log, which a plain build leaves out
    assert "START" in verbose.stdout and "running dbt with arguments" in verbose.stdout
