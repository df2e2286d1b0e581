"""Commands import only what they use: the read verbs (`finrag sql`, `report`, `compare`, `gate`, `ls`) and the
library modules they run import neither Great Expectations, torch, LanceDB nor dbt, and `finrag --help` imports no
verb's module. Each check runs in a fresh interpreter (this one has imported everything), read from its sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys

from support.paths import PROJECT

HEAVY = ("great_expectations", "torch", "lancedb", "dbt", "sentence_transformers", "transformers", "pyspark",
         "streamlit", "phoenix")  # phoenix: the Phoenix client (httpx, OpenTelemetry), the traces-phoenix verb's alone
READ_VERBS = ("sql", "report", "compare", "gate", "ls")
# what the read verbs call when they run (imported inside functions too): the readers of the published marts
READ_LIBRARY = ("python_jobs.marts.published", "python_jobs.marts.queries", "python_jobs.marts.reports",
                "python_jobs.marts.comparisons", "python_jobs.marts.trust", "python_jobs.gate.evaluation",
                "python_jobs.gate.reports", "python_jobs.gate.verdicts", "python_jobs.gate.spec")


def modules_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                         cwd=PROJECT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def heavy_in(modules: list[str]) -> list[str]:
    return sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY})


def test_the_read_verbs_import_no_heavy_library() -> None:
    # one interpreter for all of them: what any one imports, their union holds
    modules = modules_after("".join(f"import python_jobs.commands.{verb}\n" for verb in READ_VERBS)
                            + "".join(f"import {m}\n" for m in READ_LIBRARY))
    assert {f"python_jobs.commands.{verb}" for verb in READ_VERBS} <= set(modules)  # the check sees the verbs
    assert heavy_in(modules) == []


def test_help_imports_no_verb() -> None:
    modules = modules_after("from click.testing import CliRunner\nfrom python_jobs.cli import cli\n"
                            "result = CliRunner().invoke(cli, ['--help'])\n"
                            "assert result.exit_code == 0, result.output\n"
                            "assert 'train-page-scorer' in result.output and 'ls ' in result.output, result.output")
    assert [m for m in modules if m.startswith("python_jobs.commands.")] == []
    assert heavy_in(modules) == [] and "tqdm" not in modules and "polars" not in modules


def test_the_check_sees_a_heavy_import() -> None:
    # the rule would pass on a check that cannot see: a verb that loads a model or runs dbt shows it
    assert heavy_in(modules_after("import json")) == []
    assert heavy_in(["json", "torch.nn", "dbt.cli.main", "dbtx"]) == ["dbt", "torch"]


def test_the_statistics_of_an_on_demand_compare_import_neither_pandas_nor_scipy_stats() -> None:
    # the functions `finrag compare` registers on its query (a pair no mart holds), called as its query calls them:
    # pyarrow's pa.array imports pandas and scipy.stats takes ~1 CPU-s, together most of that read's second once;
    # pa.StructArray.from_arrays with a mask imports pyarrow.compute (~30 ms)
    modules = modules_after(
        "import duckdb\nfrom python_jobs.stats import paired_tests, unpaired_tests\n"
        "con = duckdb.connect()\npaired_tests.register_duckdb_functions(con)\n"
        "unpaired_tests.register_duckdb_functions(con)\n"
        "row = con.sql(\"select paired_tests([0.1, -0.2, 0.3, 0.0], 100, 100, 1, 0.95), pair_outcome(0.1, true), "
        "tukey_hsd_p(0.1, 0.5, 1000, 1000, 102, 101898), tukey_hsd_p(0.1, 0.5, 10, 10, 2, 18), "
        "welch_tests([0.1, 0.2], [0.3, 0.1, 0.2], 100, 1, 0.95), comparison_test(0, 2, 3)\").fetchall()[0]\n"
        "assert row[0]['p_ttest'] is not None and row[1] == 'win' and 0 < row[2] < 1 and 0 < row[3] < 1, row\n"
        "assert row[4]['ci_low'] is not None and row[5] == 'welch_t', row")
    assert "pandas" not in modules and "scipy.stats" not in modules and "pyarrow.compute" not in modules
