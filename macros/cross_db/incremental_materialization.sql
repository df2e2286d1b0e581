{% macro incremental_materialization() %}
{#-
    The materialization of the run-versioned models: incremental on DuckDB (delete+insert by run, the stale runs
    deleted by a hook). Spark's plain Parquet tables have neither DELETE nor MERGE (Delta Lake and Iceberg would, but
    their jars come from Maven, out of reach offline), so on Spark these models are rebuilt whole each build: the
    same rows, computed for every run.
-#}
{{ return('incremental' if target.type == 'duckdb' else 'table') }}
{% endmacro %}


{% macro run_incremental_config(tags=none, upstream=none, unique_key='run_id', post_hook=none) %}
{#-
    The config of a run-versioned incremental model, the one place its form is spelled ({{ config(...) }} takes the
    dict): incremental_materialization() (a whole table on Spark) and
    - by default, rows keyed by run: delete+insert by `unique_key` (run_id), then the post-hook retrieval_record_runs
      (rows of runs gone from the lake deleted, the run versions the model now holds recorded);
    - `upstream` (a model name): rows over that run-versioned model's per-run rows, appended: the pre-hook deletes
      the runs whose version (upstream_run_versions of it) changed, the post-hook records those versions;
    - `post_hook` (Jinja text): another post-hook instead (fct_run_comparisons, keyed by pair: its vanished pairs).
    Hooks are Jinja text, rendered when they run.
-#}
{%- set config = {'materialized': incremental_materialization()} -%}
{%- if upstream is none -%}
    {%- do config.update({
        'unique_key': unique_key,
        'incremental_strategy': 'delete+insert',
        'post_hook': post_hook or '{{ retrieval_record_runs() }}',
    }) -%}
{%- else -%}
    {%- set versions = "upstream_run_versions(ref('" ~ upstream ~ "'))" -%}
    {%- do config.update({
        'incremental_strategy': 'append',
        'on_schema_change': 'append_new_columns',
        'pre_hook': '{{ per_run_delete_stale(' ~ versions ~ ') }}',
        'post_hook': '{{ retrieval_record_runs(' ~ versions ~ ') }}',
    }) -%}
{%- endif -%}
{%- if tags is not none -%}
    {%- do config.update({'tags': tags}) -%}
{%- endif -%}
{{ return(config) }}
{% endmacro %}
