"""`finrag export-answers --run-id ID [--out FILE]`: an answer run → an answer file (JSON Lines, one line per
answered question, validated against schemas/answer_file.schema.json before it is written).

Failed answers (no answer, error set) are left out: the file is partial, which the format allows. Answers are cut
to the run's max_words when its params ask for it. Passage texts come from the answer run itself (imported files)
or from the lake's chunks (runs made by `finrag answer`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.sources.answer_files import export_answer_file


@click.command("export-answers")
@click.option("--run-id", required=True, help="Answer run to export.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file (default: stdout).")
def command(run_id: str, out: Path | None) -> None:
    """Write an answer run as an answer file."""
    lines = export_answer_file(Lake(), run_id, out.name if out else "<stdout>")
    text = "".join(x + "\n" for x in lines)
    if out is None:
        sys.stdout.write(text)
    else:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    say(f"exported {len(lines)} answers of run {run_id}" + (f" to {out}" if out else ""))
