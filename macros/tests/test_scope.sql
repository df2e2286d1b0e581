{#-
    Data tests on the rows a build touched, not on every row every time (dbt's `where` mechanism, applied by the
    project rather than test by test):
    - a test on a lake staging view (stg_lake__<table>) reads only the partitions that are new or changed since the
      last successful build (the table's partitions, read as stg_lake__partitions reads them, against
      finrag_tested_partitions);
    - a test on an incremental run-versioned model (a run_version column) reads only the runs whose version is not
      among those tested by the last successful build (finrag_tested_runs).
    Only when the environment says FINRAG_TEST_SCOPE=touched: `finrag build` sets it when the project's code is
    the code of the last recorded build and only lake tables changed (python_jobs/warehouse/build_plan.py), so a new
    or changed test, model or macro is always checked against every row. Everything else, and every test of a
    --full-refresh build or of a warehouse that has not recorded a build yet, reads whole tables. The records are
    written by the on-run-end hook record_tested_state(), only when every node of the build succeeded, so rows a
    failed build left untested are tested again next time.
    Lake keys are also checked across partitions at landing (python_jobs/core/lake.py), which is what makes scoping
    a staging uniqueness test to the new partitions sound.
-#}

{% macro get_where_subquery(relation) -%}
{#- dbt's own where-config handling (global_project where_subquery.sql), plus the build scope above. -#}
    {%- set where = config.get('where', '') -%}
    {%- set scope = test_row_scope(relation) -%}
    {%- set conditions = [where, scope] | select | list -%}
    {%- if conditions -%}
        {%- set filtered -%}
            (select * from {{ relation }} where {{ conditions | map('string') | join(' and ') }}) dbt_subquery
        {%- endset -%}
        {%- do return(filtered) -%}
    {%- else -%}
        {%- do return(relation) -%}
    {%- endif -%}
{%- endmacro %}


{% macro test_row_scope(relation) -%}
{#- The condition that limits a test of `relation` to what this build touched, or '' for every row. -#}
    {%- if not execute or flags.FULL_REFRESH or relation is string or relation.identifier is none -%}
        {{ return('') }}
    {%- endif -%}
    {#- read only at execution (never while parsing), so the variable does not invalidate dbt's partial parse -#}
    {%- if env_var('FINRAG_TEST_SCOPE', 'all') != 'touched' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set node = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
                    | selectattr('alias', 'equalto', relation.identifier) | list or [none])[0] -%}
    {%- if node is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set state = adapter.get_relation(database=relation.database, schema=relation.schema,
                                         identifier='finrag_tested_partitions') -%}
    {%- if state is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- if node.name.startswith('stg_lake__') and node.name != 'stg_lake__partitions' -%}
        {#- the table's partitions from the lake itself, as stg_lake__partitions computes them (the staging model's
            meta, from the contract), not from that table: the same build may be rebuilding it while this test
            compiles, since a staging test does not depend on it, and a read between its drop and its rename saw
            the last build's partitions -#}
        {%- set part = node.config.meta.lake_partition -%}
        {%- set sql -%}
            select distinct parts.partition_column, parts.partition_value
            from ({{ lake_partitions(node.name[10:], part.column, part.has_dataset) }}) as parts
            where not exists (
                    select 1 from {{ state }} as tested
                    where tested.table_name = parts.table_name
                        and tested.partition_value = parts.partition_value
                        and tested.dataset is not distinct from parts.dataset
                        and tested.n_rows = parts.n_rows
                        and tested.loaded_at = parts.loaded_at
                )
        {%- endset -%}
    {%- elif node.config.materialized == 'incremental' and 'run_version' in node.columns -%}
        {#- the runs the model holds, from the record of their versions (finrag_run_versions: small), not the model -#}
        {%- set record = adapter.get_relation(database=relation.database, schema=relation.schema,
                                              identifier='finrag_run_versions') -%}
        {%- set sql -%}
            select distinct 'run_id' as partition_column, built.run_id
            {%- if record is not none %}
            from {{ record }} as built
            where built.model_name = '{{ node.alias }}' and not exists (
            {%- else %}
            from {{ relation }} as built
            where not exists (
            {%- endif %}
                select 1 from {{ state.incorporate(path={'identifier': 'finrag_tested_runs'}) }} as tested
                where tested.model_name = '{{ node.alias }}'
                    and tested.run_id = built.run_id
                    and tested.run_version = built.run_version
            )
        {%- endset -%}
    {%- else -%}
        {{ return('') }}
    {%- endif -%}
    {%- set touched = run_query(sql) -%}
    {%- if touched.rows | length == 0 -%}
        {{ return('false') }}
    {%- endif -%}
    {%- set values = [] -%}
    {%- for row in touched.rows -%}
        {%- do values.append("'" ~ (row[1] | string | replace("'", "''")) ~ "'") -%}
    {%- endfor -%}
    {{ return(adapter.quote(touched.rows[0][0]) ~ ' in (' ~ (values | join(', ')) ~ ')') }}
{%- endmacro %}


{% macro record_tested_state(results) -%}
{#-
    on-run-end: after a build in which every node succeeded, remember what its tests covered: the lake partitions
    (a copy of stg_lake__partitions) and, per incremental run-versioned model, each run's version.
-#}
    {#- on Spark every build is a whole one (macros/cross_db/incremental_materialization.sql): nothing to remember -#}
    {%- if not execute or flags.WHICH not in ('build', 'test') or target.type != 'duckdb' -%}
        {{ return('') }}
    {%- endif -%}
    {%- if not every_node_succeeded(results) -%}
        {{ return('') }}
    {%- endif -%}
    {%- set partitions = adapter.get_relation(database=target.database, schema=target.schema,
                                              identifier='stg_lake__partitions') -%}
    {%- if partitions is none -%}
        {{ return('') }}
    {%- endif -%}
    {%- set versioned = [] -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.config.materialized == 'incremental'
        and 'run_version' in node.columns -%}
        {%- set rel = adapter.get_relation(database=target.database, schema=target.schema, identifier=node.alias) -%}
        {%- if rel is not none -%}
            {%- do versioned.append((node.name, rel)) -%}
        {%- endif -%}
    {%- endfor -%}
    create or replace table {{ partitions.incorporate(path={'identifier': 'finrag_tested_partitions'}) }} as
        select table_name, partition_value, dataset, n_rows, loaded_at from {{ partitions }};
    {%- set record = adapter.get_relation(database=target.database, schema=target.schema,
                                          identifier='finrag_run_versions') %}
    create or replace table {{ partitions.incorporate(path={'identifier': 'finrag_tested_runs'}) }} as
    {% if record is not none %}
        {#- what every run-versioned model holds, as its post-hook recorded it (finrag_run_versions: small) -#}
        select model_name, run_id, run_version from {{ record }}
    {% else %}
    {% for name, rel in versioned %}
        select distinct '{{ rel.identifier }}' as model_name, run_id, run_version from {{ rel }}
        {{ 'union all' if not loop.last }}
    {% else %}
        select null::varchar as model_name, null::varchar as run_id, null::varchar as run_version where false
    {% endfor %}
    {% endif %};
{%- endmacro %}
