"""The Spark side of the warehouse: dbt-spark's `session` method runs PySpark inside the dbt process, so dbt runs
for the `spark` target start here (`python -m python_jobs.warehouse.spark_session <dbt args>`, called by
python_jobs/warehouse/dbt_runner.py) rather than from the `dbt` executable:

- the SparkSession is made first, from the `spark` output of profiles.yml (the one place its settings live), and
  dbt-spark's own `getOrCreate()` then returns it;
- the lake becomes the `lake` database: one view per lake table over its Parquet files (`lake/<table>/*/*.parquet`,
  schemas merged as DuckDB's `union_by_name` does), which is what `source('lake', ...)` names on Spark;
- the text metrics and the run comparison's statistics are registered as pandas UDFs from the same Python functions
  the DuckDB plugin registers (python_jobs/stats/text_metrics.py, paired_tests.py).

A team on a cluster points the profile at it instead (`method: thrift` / `http`, README "Scaling"); there the lake
views and the UDFs have to exist on the cluster's side (`finrag spark-setup`-style SQL, or a Databricks init script).
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
from jinja2 import Environment

from python_jobs.core.config import HOME_ENV, PROJECT_DIR, lake_dir, project_yaml, warehouse_home
from python_jobs.core.contracts import CONTRACTS
from python_jobs.core.errors import InputError
from python_jobs.core.lake import ensure_placeholders

TARGET = "spark"
LAKE_DATABASE = "lake"
LOG_CONFIG = Path(__file__).with_name("spark_log4j2.properties")
SPARK_SCHEMA = "finrag"  # profiles.yml's spark output: the schema dbt builds into


def spark_conf(home: Path) -> dict[str, str]:
    """The `spark` output's server_side_parameters, rendered as dbt renders them (env_var) for `home`."""
    env = Environment(autoescape=False)
    overrides = {HOME_ENV: str(home)}

    def env_var(name: str, default: str | None = None) -> str:
        value = overrides.get(name, os.environ.get(name, default))
        if value is None:
            raise KeyError(f"profiles.yml needs ${name}")
        return value

    env.globals["env_var"] = env_var
    profile = project_yaml(PROJECT_DIR / "profiles.yml")
    params = profile["finrag"]["outputs"][TARGET]["server_side_parameters"]
    return {key: env.from_string(str(value)).render() for key, value in params.items()}


def session(home: str | os.PathLike[str] | None = None, lake_views: bool = True) -> Any:
    """The SparkSession over `home`'s lake, with the lake views (unless `lake_views` is false: a session that
    only reads the marts) and the project's UDFs."""
    h = warehouse_home(home)
    # the Python workers that run the UDFs are this interpreter (its packages, the project importable)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for sub in ("warehouse", "metastore"):
        (h / "spark" / sub).mkdir(parents=True, exist_ok=True)
    # PySpark 4.3 warns at each import that it predates pandas 3; the UDFs convert missing values themselves
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    from pyspark.sql import SparkSession

    conf = spark_conf(h)
    conf["spark.driver.extraJavaOptions"] = " ".join(filter(None, [
        conf.get("spark.driver.extraJavaOptions"), f"-Dlog4j2.configurationFile=file:{LOG_CONFIG}"]))
    builder = SparkSession.builder.enableHiveSupport()
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # PySpark logs every failed query as JSON with its JVM stack; the error reaches the user through dbt or finrag
    logging.getLogger("SQLQueryContextLogger").disabled = True
    if lake_views:
        create_lake_views(spark, h)
    register_functions(spark)
    return spark


def query(sql: str, params: Sequence[object] = (), home: str | os.PathLike[str] | None = None) -> pl.DataFrame:
    """One query over the Spark warehouse's tables (the `spark` target's schema), as a frame. Files cannot be
    read by path (`parquet.`/etc/...``): runSQLOnFiles is off for this session, which has no lake views."""
    spark = session(home, lake_views=False)
    spark.conf.set("spark.sql.runSQLOnFiles", "false")
    from pyspark.errors import AnalysisException

    try:
        spark.sql(f"use {SPARK_SCHEMA}")
        return pl.from_arrow(spark.sql(sql, args=list(params)).toArrow())
    except AnalysisException as exc:
        message = str(exc).splitlines()[0]
        if "TABLE_OR_VIEW_NOT_FOUND" in message or "SCHEMA_NOT_FOUND" in message:
            raise InputError(f"a table is missing on Spark ({message}): run `finrag build --target spark`",
                             field="sql") from None
        raise InputError(message, field="sql") from None


def create_lake_views(spark: Any, home: Path) -> None:
    """`lake.<table>` for every lake table: a view over its Parquet files, read afresh by every query (a landing is
    visible to the next build without a refresh)."""
    root = lake_dir(home)
    ensure_placeholders(root)
    spark.sql(f"create database if not exists {LAKE_DATABASE}")
    for name in CONTRACTS:
        path = (root / name).as_posix() + "/*/*.parquet"
        spark.sql(f"create or replace view {LAKE_DATABASE}.{name} as select * from parquet.`{path}`")


def register_functions(spark: Any) -> None:
    from python_jobs.stats import paired_tests, sql_functions, student_t, text_metrics, unpaired_tests

    text_metrics.register_spark_functions(spark)
    paired_tests.register_spark_functions(spark)
    unpaired_tests.register_spark_functions(spark)
    student_t.register_spark_functions(spark)
    sql_functions.register_spark_version_function(spark)


def main() -> None:
    """`python -m python_jobs.warehouse.spark_session <dbt args>`: dbt on the `spark` target, in this process."""
    session()
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(sys.argv[1:])
    sys.exit(0 if result.success else (1 if result.exception is None else 2))


if __name__ == "__main__":
    main()
