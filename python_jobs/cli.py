"""The `finrag` command line. Each verb lives in its own module (python_jobs/commands/<module>.py, attribute `command`)
and is imported only when it runs, so `finrag sql` does not pay for torch."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import sys
from pathlib import Path

import click

from python_jobs.core.config import HOME_ENV, warehouse_home
from python_jobs.core.console import QUIET, VERBOSE, set_verbosity
from python_jobs.core.errors import InputError, JobError

# verb -> module that defines `command` (a click command or group)
VERBS: dict[str, str] = {
    "ingest": "python_jobs.commands.ingest",
    "chunk": "python_jobs.commands.chunk",
    "synth": "python_jobs.commands.synth",
    "index": "python_jobs.commands.index",
    "retrieve": "python_jobs.commands.retrieve",
    "sweep": "python_jobs.commands.sweep",
    "export-run": "python_jobs.commands.export_run",
    "build": "python_jobs.commands.build",
    "sql": "python_jobs.commands.sql",
    "report": "python_jobs.commands.report",
    "compare": "python_jobs.commands.compare",
    "gate": "python_jobs.commands.gate",
    "demo": "python_jobs.commands.demo",
    "topics": "python_jobs.commands.topics",
    "answer": "python_jobs.commands.answer",
    "llm-serve": "python_jobs.commands.llm_serve",
    "import-answers": "python_jobs.commands.import_answers",
    "export-answers": "python_jobs.commands.export_answers",
    "judge": "python_jobs.commands.judge",
    "import-human-labels": "python_jobs.commands.import_human_labels",
    "calibrate": "python_jobs.commands.calibrate",
    "label-next": "python_jobs.commands.label_next",
    "generate-qa": "python_jobs.commands.generate_qa",
    "export-inspection": "python_jobs.commands.export_inspection",
    "import-inspection": "python_jobs.commands.import_inspection",
    "publish": "python_jobs.commands.publish",
    "dashboard": "python_jobs.commands.dashboard",
    "contracts": "python_jobs.commands.contracts",
    "data-docs": "python_jobs.commands.data_docs",
    "train-page-scorer": "python_jobs.commands.train_page_scorer",
    "train-reranker": "python_jobs.commands.train_reranker",
    "ls": "python_jobs.commands.ls",
}


def _verbosity(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        set_verbosity(QUIET if param.name == "quiet" else VERBOSE)


VERBOSITY_OPTIONS = (
    click.Option(["--quiet", "-q"], is_flag=True, expose_value=False, is_eager=True, callback=_verbosity,
                 help="Errors and warnings only: no notes, no progress bars."),
    click.Option(["--verbose", "-v"], is_flag=True, expose_value=False, is_eager=True, callback=_verbosity,
                 help="Also the libraries' INFO logs (HTTP calls, model loading; dbt's debug log for build)."),
)


def with_verbosity(cmd: click.Command) -> click.Command:
    """One --quiet / --verbose on every verb and sub-verb, added here rather than declared by each."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            with_verbosity(sub)
    else:
        names = {p.name for p in cmd.params}
        cmd.params.extend(o for o in VERBOSITY_OPTIONS if o.name not in names)
    return cmd


def short_help(module: str) -> str:
    """A verb's one-line help without importing its module (`finrag --help` would import every job: torch, the PDF
    writer, the embedded LLM server): its command's docstring, read from the source, which click shortens as its own
    help listing does."""
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "command":
            return ast.get_docstring(node) or ""
    return ""


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(v for v, m in VERBS.items() if importlib.util.find_spec(m) is not None)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The verbs and their help, each read from its module's source (no verb is imported to list them)."""
        rows = [(name, short_help(VERBS[name])) for name in self.list_commands(ctx)]
        limit = formatter.width - 6 - max((len(name) for name, _ in rows), default=0)
        with formatter.section("Commands"):
            formatter.write_dl([(name, click.utils.make_default_short_help(text, limit)) for name, text in rows])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = VERBS.get(name)
        if module is None or importlib.util.find_spec(module) is None:
            return None
        return with_verbosity(importlib.import_module(module).command)


@click.group(cls=LazyGroup)
@click.option("--home", envvar=HOME_ENV, default=None, help=f"Warehouse home (default ${HOME_ENV} or ./warehouse).")
@click.pass_context
def cli(ctx: click.Context, home: str | None) -> None:
    """FinRAG Warehouse jobs: ingest, chunk, index, retrieve, build, query."""
    if home:
        # every job and dbt read the home from the environment; make the flag win for this process and children
        os.environ[HOME_ENV] = os.path.abspath(home)
        try:  # a file where the home should be: said before any verb runs, naming the flag or the variable
            warehouse_home()
        except InputError as exc:
            flag = ctx.get_parameter_source("home") is click.core.ParameterSource.COMMANDLINE
            raise InputError(exc.detail, file=exc.file, field="--home" if flag else HOME_ENV) from None


def main() -> None:
    if not sys.stderr.isatty():
        # the libraries' bars (model loading, the trainer) stay off where nobody watches, as ours do
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        cli.main(standalone_mode=False)
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except JobError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
