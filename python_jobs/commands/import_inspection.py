"""`finrag import-inspection FILE`: land annotators' scores of generated QA instances (the file export-inspection
wrote, .csv or .jsonl) and apply them to the questions.

    finrag import-inspection sample.csv [--inspection-run-id ID]

Validation, before anything lands (errors name file, line and field): the columns question_id, score,
corrected_question, corrected_answer and comment are present; every question id is a generated instance in the
lake, and appears once; a score is an integer 1-5 (a blank score = not inspected, the row is skipped); a 3 carries a
corrected question or answer. Verdicts: 1-2 drop, 3 fix, 4-5 keep.

One atomic landing: the qa_inspections partition (inspector 'human', id human-<file sha256 10> unless given) and
every affected generation run's questions partition re-landed with the human verdicts applied
(qa_generation/human_inspection.py): dropped -> split 'dropped'; fixed -> corrected text (original kept in
meta); accepted test instances -> 'gen_human_test'. Importing the same file again changes nothing.
"""

from __future__ import annotations

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.qa_generation.annotation_files import import_file


@click.command("import-inspection")
@produces
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--inspection-run-id", default=None, help="Id of this inspection (default human-<file sha256 10>).")
def command(file: str, inspection_run_id: str | None) -> Produced:
    """Land human scores (1-5) of generated QA instances and apply them (drop / fix / keep) to the questions."""
    r = import_file(Lake(), file, inspection_run_id)
    v = r.verdicts
    say(f"landed {sum(v.values())} human inspections (keep {v.get('keep', 0)}, fix {v.get('fix', 0)}, drop "
        f"{v.get('drop', 0)}; {r.skipped} rows without a score skipped); re-landed {r.generation_runs} "
        "generation run(s): " + ", ".join(f"{k} {n}" for k, n in r.splits.items()))
    return r.inspection_run_id, {"inspection_run_id": r.inspection_run_id}
