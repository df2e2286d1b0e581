{#-
    What an incremental retrieval model recomputes, derived rather than declared: a run's version is a hash of
    - the model's code: its own checksum and every upstream model's and seed's, the macros they call, and the vars
      that shape the SQL (code_fingerprint), so a change to any of them recomputes every run;
    - the lake partitions the model reads for that run: of every lake table upstream of the model in dbt's graph
      (upstream_lake_tables), the run's own partitions (tables partitioned by run_id: retrieval_runs,
      retrieval_results) and every partition of the run's dataset (qrels, questions, chunks, documents), each as
      its row count and newest landing time (stg_lake__partitions).
    A re-landed run, any re-landed input partition of its dataset or a code change rebuilds exactly the runs it
    touches; nothing lists those inputs by hand.
-#}

{% macro upstream_lake_tables(node_id=none) %}
{#- The lake tables (source 'lake') upstream of a node, through every ref: sorted table names. -#}
{%- set start = node_id or model.unique_id -%}
{%- set seen = [] -%}
{%- set tables = [] -%}
{%- set queue = [start] -%}
{%- for _ in range(1000) if queue -%}
    {%- set uid = queue.pop(0) -%}
    {%- if uid not in seen -%}
        {%- do seen.append(uid) -%}
        {%- if uid.startswith('source.') -%}
            {%- set source = graph.sources[uid] -%}
            {%- if source.source_name == 'lake' and source.name not in tables -%}
                {%- do tables.append(source.name) -%}
            {%- endif -%}
        {%- elif uid in graph.nodes -%}
            {%- do queue.extend(graph.nodes[uid].depends_on.nodes) -%}
        {%- endif -%}
    {%- endif -%}
{%- endfor -%}
{{ return(tables | sort) }}
{% endmacro %}


{% macro code_fingerprint(node_id=none) %}
{#-
    A hash of what a node's SQL is made of: the checksums of the node and of every model and seed upstream of it,
    the SQL of every macro they call, and the vars that shape the models (retrieval_ks, drilldown_depth).
-#}
{%- set start = node_id or model.unique_id -%}
{%- set seen = [] -%}
{%- set parts = [] -%}
{%- set macros = [] -%}
{%- set queue = [start] -%}
{%- for _ in range(1000) if queue -%}
    {%- set uid = queue.pop(0) -%}
    {%- if uid not in seen and uid in graph.nodes -%}
        {%- do seen.append(uid) -%}
        {%- set node = graph.nodes[uid] -%}
        {%- do parts.append(uid ~ '=' ~ node.checksum.checksum) -%}
        {%- for m in node.depends_on.macros if m not in macros -%}
            {%- do macros.append(m) -%}
        {%- endfor -%}
        {%- do queue.extend(node.depends_on.nodes) -%}
    {%- endif -%}
{%- endfor -%}
{%- for m in macros | sort if m in graph.macros -%}
    {%- do parts.append(m ~ '=' ~ local_md5(graph.macros[m].macro_sql)) -%}
{%- endfor -%}
{%- do parts.append('retrieval_ks=' ~ (var('retrieval_ks') | join(','))) -%}
{%- do parts.append('drilldown_depth=' ~ var('drilldown_depth')) -%}
{{ return(local_md5(parts | sort | join('|'))) }}
{% endmacro %}


{% macro retrieval_run_versions() %}
{#- A select of every run's version for the model being built (see the top of this file): run_id, run_version. -#}
{%- set tables = upstream_lake_tables() -%}
    select
        runs.run_id,
        md5('{{ code_fingerprint() }}|' || coalesce({{ ordered_string_agg(
            "parts.table_name || '/' || parts.partition_value || ':' || cast(parts.n_rows as string) || '@'
                || cast(parts.loaded_at as string)",
            "','", ['parts.table_name', 'parts.partition_value']
        ) }}, '')) as run_version
    from {{ ref('int_retrieval_runs') }} as runs
    left join {{ ref('stg_lake__partitions') }} as parts
        on parts.table_name in ({% for t in tables %}'{{ t }}'{{ ", " if not loop.last }}{% else %}''{% endfor %})
        and (
            (parts.partition_column = 'run_id' and parts.partition_value = runs.run_id)
            or (parts.partition_column <> 'run_id' and (parts.dataset = runs.dataset or parts.dataset is null))
        )
    group by runs.run_id
{% endmacro %}


{% macro retrieval_runs_to_process() %}
{#-
    A select of the runs an incremental retrieval model computes in this build, with their versions (run_id,
    run_version): every run in a full build; in an incremental build, the runs whose version is not yet in the
    model. Models join their inputs to it (DuckDB prunes the lake's other run partitions from the scan by the
    join's filter), and delete the rows of runs gone from the lake in a post-hook.
-#}
    with versions as (
        {{ retrieval_run_versions() }}
    )
    select versions.run_id, versions.run_version
    from versions
    {%- if is_incremental() %}
    where not exists (
        select 1 from {{ this }} as done
        where done.run_id = versions.run_id and done.run_version = versions.run_version
    )
    {%- endif %}
{% endmacro %}


{% macro retrieval_pending_runs() %}
{#-
    The runs of retrieval_runs_to_process() with their attributes: every column of int_retrieval_runs plus the
    model's run_version. What each incremental retrieval model starts from.
-#}
    select
        runs.*,
        pending.run_version
    from {{ ref('int_retrieval_runs') }} as runs
    inner join ({{ retrieval_runs_to_process() }}) as pending on runs.run_id = pending.run_id
{% endmacro %}


{% macro retrieval_drop_vanished_runs() %}
{#- post-hook of the incremental retrieval models: a run removed from the lake leaves the marts too (a whole build,
    and every build on Spark, has only the lake's runs). -#}
{%- if is_incremental() %}
delete from {{ this }} where run_id not in (select run_id from {{ ref('int_retrieval_runs') }})
{%- endif %}
{% endmacro %}


{% macro retrieval_ks_values() %}
{#- The ranking cut-offs (var retrieval_ks; 0 = the whole ranking) as a one-column relation `k`. -#}
{%- for k in var('retrieval_ks') %}
    select cast({{ k | int }} as integer) as k{{ "\n    union all" if not loop.last }}
{%- endfor %}
{% endmacro %}
