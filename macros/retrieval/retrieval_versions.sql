{#-
    What an incremental retrieval model recomputes, derived rather than declared: a run's version is a hash of
    - the model's code: what its compiled SQL is made of, derived from dbt's graph (code_fingerprint: every upstream
      model and seed, the macros they call, the vars and env vars they name, the Python functions they call), so a
      change to any of them recomputes every run of the models it reaches;
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
    What a node's compiled SQL is made of, derived from dbt's graph, as a SQL expression (a string):
    - the node's and every upstream model's and seed's checksum (a seed's is its file's: a changed row counts);
    - the text of every macro they call, followed through the macros those call (and each macro's adapter
      implementations default__ / duckdb__ / spark__, which adapter.dispatch picks at run time);
    - the value of every var and env var named in that code (var('...') / env_var('...')), so e.g.
      `--vars '{retrieval_exclude_without_content: []}'` recomputes the runs of the models that read it;
    - the source of every Python function the warehouse registers into SQL that the code calls (sql_function_version,
      python_jobs/stats/sql_functions.py: the function, what it calls, the versions of the libraries it uses).
    Graph, macros and vars are hashed at compile time; the function part is looked up by the database at run time.
-#}
{%- set start = node_id or model.unique_id -%}
{%- set seen = [] -%}
{%- set parts = [] -%}
{%- set texts = [] -%}
{%- set macros = [] -%}
{%- set queue = [start] -%}
{%- for _ in range(1000) if queue -%}
    {%- set uid = queue.pop(0) -%}
    {%- if uid not in seen and uid in graph.nodes -%}
        {%- do seen.append(uid) -%}
        {%- set node = graph.nodes[uid] -%}
        {%- do parts.append(uid ~ '=' ~ node.checksum.checksum) -%}
        {%- do texts.append(node.raw_code or '') -%}
        {%- do macros.extend(node.depends_on.macros) -%}
        {%- do queue.extend(node.depends_on.nodes) -%}
    {%- endif -%}
{%- endfor -%}
{%- set done = [] -%}
{%- for _ in range(5000) if macros -%}
    {%- set uid = macros.pop(0) -%}
    {%- if uid not in done -%}
        {%- do done.append(uid) -%}
        {%- set package, name = uid.split('.')[1], uid.split('.')[2] -%}
        {%- set namespace = context if package == project_name else context.get(package, {}) -%}
        {%- for candidate in [name, 'default__' ~ name, target.type ~ '__' ~ name, 'spark__' ~ name] -%}
            {%- set found = namespace.get(candidate) -%}
            {%- if found is not none and found.macro is defined -%}
                {%- do parts.append(found.macro.unique_id ~ '=' ~ local_md5(found.macro.macro_sql)) -%}
                {%- do texts.append(found.macro.macro_sql) -%}
                {%- do macros.extend(found.macro.depends_on.macros) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endfor -%}
{%- set code = texts | join('\n') -%}
{%- for name in modules.re.findall("\\bvar\\(\\s*['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]", code) | unique | sort -%}
    {%- do parts.append('var ' ~ name ~ '=' ~ tojson(var(name, none), sort_keys=true)) -%}
{%- endfor -%}
{#- FINRAG_HOME (read by lake_files) says where the lake is, not what a run computes: the lake's data
    is the partition part of a version, and a home copied elsewhere keeps its runs -#}
{%- for name in modules.re.findall("\\benv_var\\(\\s*['\"]([A-Za-z_][A-Za-z0-9_]*)['\"]", code) | unique | sort
      if name != 'FINRAG_HOME' -%}
    {%- do parts.append('env ' ~ name ~ '=' ~ env_var(name, '')) -%}
{%- endfor -%}
{%- set called = modules.re.findall("\\b([A-Za-z_][A-Za-z0-9_]*)\\s*\\(", code) | unique | sort -%}
{{ return("'" ~ local_md5(parts | unique | sort | join('|')) ~ "' || sql_function_version('" ~ called | join(',') ~ "')") }}
{% endmacro %}


{% macro retrieval_run_versions() %}
{#- A select of every run's version for the model being built (see the top of this file): run_id, run_version. -#}
{%- set tables = upstream_lake_tables() -%}
    select
        runs.run_id,
        md5({{ code_fingerprint() }} || '|' || coalesce({{ ordered_string_agg(
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


{% macro run_versions_record() %}
{#- finrag_run_versions, the record of which version of each run every run-versioned model holds (written by
    record_run_versions after the model is built), or none before the first such build. -#}
    {{ return(adapter.get_relation(database=this.database, schema=this.schema, identifier='finrag_run_versions')) }}
{% endmacro %}


{% macro retrieval_runs_to_process() %}
{#-
    A select of the runs an incremental retrieval model computes in this build, with their versions (run_id,
    run_version): every run in a full build; in an incremental build, the runs whose version differs from the one
    the record says the model holds (finrag_run_versions: a small table, so deciding costs the same whatever the
    model holds; without a record, every run). Models join their inputs to it (DuckDB prunes the lake's other run
    partitions from the scan by the join's filter), and a post-hook deletes the rows of runs gone from the lake.
-#}
    {%- set record = run_versions_record() if is_incremental() else none %}
    with versions as (
        {{ retrieval_run_versions() }}
    )
    select versions.run_id, versions.run_version
    from versions
    {%- if record is not none %}
    where not exists (
        select 1 from {{ record }} as done
        where done.model_name = '{{ this.identifier }}'
            and done.run_id = versions.run_id
            and done.run_version = versions.run_version
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


{% macro create_run_versions_record() %}
{#- on-run-start: the record finrag_run_versions exists before any model runs (created once: two models' post-hooks
    creating it at once would conflict). -#}
{%- if execute and target.type == 'duckdb' %}
create table if not exists {{ api.Relation.create(database=target.database, schema=target.schema,
                                                  identifier='finrag_run_versions') }}
    (model_name varchar, run_id varchar, run_version varchar)
{%- endif %}
{% endmacro %}


{% macro retrieval_record_runs(versions_sql=none) %}
{#-
    post-hook of the incremental run-versioned models (DuckDB; on Spark every build is whole): a run removed from
    the lake leaves the model too (its rows deleted by run id, so only its row groups are read), then the record
    finrag_run_versions says which version of every current run the model now holds. `versions_sql`: the model's
    own select of (run_id, run_version), default retrieval_run_versions().
-#}
{%- if execute and target.type == 'duckdb' %}
    {%- set record = run_versions_record() %}
    {%- if is_incremental() and record is not none %}
        {%- set vanished = run_query("select run_id from " ~ record ~ " where model_name = '" ~ this.identifier
            ~ "' except select run_id from " ~ ref('int_retrieval_runs')).columns[0].values() %}
        {%- if vanished | length > 0 %}
delete from {{ this }} where run_id in ({% for r in vanished %}'{{ r | replace("'", "''") }}'{{ ", " if not loop.last }}{% endfor %});
        {%- endif %}
    {%- endif %}
delete from {{ this.incorporate(path={'identifier': 'finrag_run_versions'}) }}
    where model_name = '{{ this.identifier }}';
insert into {{ this.incorporate(path={'identifier': 'finrag_run_versions'}) }}
    select '{{ this.identifier }}', run_id, run_version from ({{ versions_sql or retrieval_run_versions() }}) as current_runs;
{%- endif %}
{% endmacro %}


{% macro retrieval_ks_values() %}
{#- The ranking cut-offs (var retrieval_ks; 0 = the whole ranking) as a one-column relation `k`. -#}
{%- for k in var('retrieval_ks') %}
    select cast({{ k | int }} as integer) as k{{ "\n    union all" if not loop.last }}
{%- endfor %}
{% endmacro %}


{% macro run_comparisons_pending_runs(column) %}
{#- fct_run_comparisons: the condition `column in (...)` naming, as literals, the runs of the pairs whose
    pair_version the model does not hold yet (every pair's runs in a whole build), so the scans of per-question scores
    read those runs' row groups only; 'false' when there are none. -#}
{%- if not execute -%}
    {{ return('true') }}
{%- endif -%}
{%- set pairs = ref('fct_run_pairs') -%}
{%- if load_relation(pairs) is none -%}
    {#- compiled before the pairs were ever built (`dbt compile`, a linter on a fresh home): any run may be pending -#}
    {{ return('true') }}
{%- endif -%}
{%- set found = run_query(
    "select distinct run_id from (select run_a as run_id, pair_key, pair_version from " ~ pairs
    ~ " union all select run_b, pair_key, pair_version from " ~ pairs ~ ") as pair_runs"
    ~ (" where not exists (select 1 from " ~ this ~ " as done where done.pair_key = pair_runs.pair_key and "
       ~ "done.pair_version = pair_runs.pair_version)" if is_incremental() else "")).columns[0].values() -%}
{%- if found | length == 0 -%}
    {{ return('false') }}
{%- endif -%}
{%- set literals = [] -%}
{%- for r in found -%}
    {%- do literals.append("'" ~ (r | replace("'", "''")) ~ "'") -%}
{%- endfor -%}
{{ return(column ~ ' in (' ~ literals | join(', ') ~ ')') }}
{% endmacro %}


{% macro run_comparisons_drop_vanished() %}
{#- post-hook of fct_run_comparisons: the pairs no longer compared (a run gone, another best) leave it. -#}
{%- if is_incremental() %}
delete from {{ this }} where pair_key not in (select pair_key from {{ ref('fct_run_pairs') }})
{%- endif %}
{% endmacro %}
