{% macro incremental_materialization() %}
{#-
    The materialization of the run-versioned models: incremental on DuckDB (delete+insert by run, the stale runs
    deleted by a hook). Spark's plain Parquet tables have neither DELETE nor MERGE (Delta Lake and Iceberg would, but
    their jars come from Maven, out of reach offline), so on Spark these models are rebuilt whole each build: the
    same rows, computed for every run.
-#}
{{ return('incremental' if target.type == 'duckdb' else 'table') }}
{% endmacro %}
