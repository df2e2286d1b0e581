"""The dashboard's pages: the one list the navigation (app.py), the overview's table of contents and the tests read.
Each page is a file under views/ with its url path (the one its dbt exposure `dashboard_<url path>` names in
models/marts/_dashboard__exposures.yml), its title, icon, and what it shows. The first page is served at /."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

# not "pages/": a pages/ folder beside the entrypoint puts Streamlit in its legacy multipage mode, where a page URL
# runs the page file alone, without the navigation, layout and sidebar
VIEWS_DIR = Path(__file__).resolve().parent / "views"


class Page(NamedTuple):
    file: str
    title: str
    url_path: str
    icon: str
    what: str


PAGES: tuple[Page, ...] = (
    Page("overview.py", "Overview", "overview", ":material/home:",
         "what each page shows, the landing validations and the published marts"),
    Page("leaderboard.py", "Leaderboard", "leaderboard", ":material/leaderboard:",
         "runs sorted on a metric with intervals, metric-vs-k curves, sortable tables (retrieval, generation, "
         "judged), by dataset and run; oracle conditions drawn as the bounds they are"),
    Page("heatmap.py", "Topic × task", "heatmap", ":material/grid_on:",
         "OmniEval's topic × task matrix for any metric of any run"),
    Page("slices.py", "Slices", "slices", ":material/pie_chart:",
         "DocRec@k / PageRec@k and any metric by doc type, question type…, with the oracle gap"),
    Page("run_vs_run.py", "Run vs run", "run_vs_run", ":material/compare_arrows:",
         "per-question differences of two runs, and the questions that flipped"),
    Page("sweeps.py", "Sweeps", "sweeps", ":material/tune:",
         "a sweep's parameters × a metric: each value's mean with its interval, the best setting, the runs tied "
         "with the best"),
    Page("judge_agreement.py", "Judge agreement", "judge_agreement", ":material/gavel:",
         "LLM judges against human labels: confusion matrix, accuracy, kappa"),
    Page("drilldown.py", "Drill-down", "drilldown", ":material/search:",
         "why did this question fail: first gold ranks, chunks hit / miss / in prompt, answers, judge verdicts and "
         "rationales"),
    Page("judged.py", "Judged answers", "judged", ":material/rule:",
         "answer-file scores per judge run, the worst questions, judge scores by slice"),
    Page("qa_generation.py", "QA generation", "qa_generation", ":material/quiz:",
         "generated questions kept per topic × task, LLM inspector vs humans"),
    Page("costs.py", "Costs", "costs", ":material/payments:",
         "LLM calls, failures, tokens, latency and cost per job run and purpose"),
)
