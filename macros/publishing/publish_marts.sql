{#-
    Publishing: dbt itself writes the marts and seeds that readers use (`finrag sql`, `report`, `compare`, `ls`, the
    dashboard, BI tools) as Parquet under $FINRAG_HOME/exports/marts, so a plain `dbt build` refreshes what they
    read, exactly as `finrag build` does (it runs the same build). What is published is declared once: the models
    and seeds whose config has `meta: {published: true}` (dbt_project.yml gives it to models/marts and the seeds).

    Readers see one build's state or the next one's, never a mix:
    - each node's export is written under a new name (<name>.<invocation_id>.parquet), never over a file a reader
      may be reading;
    - then one manifest (_manifest.json: every published node, its files, rows, columns) replaces the previous
      one by a rename (DuckDB's COPY writes a temporary file and renames it over the target), so the manifest a
      reader opens names one consistent set of files. The manifest it replaces is kept as
      _manifest.previous.json, and the dbt plugin deletes only files neither names (python_jobs/warehouse/
      publishing.py), so a reader that opened the previous manifest still finds its files during the next build;
    - last, _build.json records the build (its invocation id and start): a reader that finds a recorded build newer
      than the manifest's (a build run with FINRAG_PUBLISH=0, or one whose publishing failed) says the published
      marts are stale instead of answering.
    Only a build in which every node succeeded publishes or records; a failed build leaves the previous state.
    Nodes the build did not run keep their previous export (a --select build republishes what it rebuilt).
-#}

{% macro published_dir() -%}
    {{ return(env_var('FINRAG_HOME', 'warehouse') ~ '/exports/marts') }}
{%- endmacro %}


{% macro published_nodes() -%}
{#- The nodes to publish, by config: models and seeds with meta.published; sorted by name. -#}
    {%- set nodes = [] -%}
    {%- for node in graph.nodes.values() if node.resource_type in ('model', 'seed')
        and node.config.enabled and (node.config.meta or {}).get('published') -%}
        {%- do nodes.append(node) -%}
    {%- endfor -%}
    {{ return(nodes | sort(attribute='alias')) }}
{%- endmacro %}


{% macro publish_marts(results=none, everything=false) -%}
{#-
    on-run-end (results: the invocation's node results) and `finrag publish` (everything=true, run-operation):
    export the published nodes the invocation built (or every one) and swap in a new manifest.
-#}
    {%- if not execute or target.type != 'duckdb' -%}
        {{ return('') }}
    {%- endif -%}
    {%- if results is not none -%}
        {%- if flags.WHICH not in ('build', 'run', 'seed') -%}
            {{ return('') }}
        {%- endif -%}
        {%- set failed = results | rejectattr('status', 'in', ['success', 'pass', 'warn', 'no-op']) | list -%}
        {%- if failed -%}
            {{ return('') }}
        {%- endif -%}
        {%- set built = results | selectattr('status', 'equalto', 'success') | map(attribute='node')
                        | map(attribute='unique_id') | list -%}
    {%- endif -%}
    {%- set out = published_dir() -%}
    {%- set build_record -%}
        select '{{ invocation_id }}' as build_id, cast('{{ run_started_at }}' as timestamptz) as built_at
    {%- endset -%}
    {%- if env_var('FINRAG_PUBLISH', '1') == '0' -%}
        {%- do run_query("copy (" ~ build_record ~ ") to '" ~ out ~ "/_build.json' (format json)") -%}
        {{ return('') }}
    {%- endif -%}

    {#- the current manifest's entries, kept for the nodes this invocation did not build -#}
    {%- set previous = {} -%}
    {%- set found = run_query("select count(*) from glob('" ~ out ~ "/_manifest.json')") -%}
    {%- if found.rows[0][0] > 0 -%}
        {%- set entries = run_query(
            "select model.name, model.rows, file.name as item, 'file' as kind, file.ordinal from (select unnest(models) as model "
            ~ "from read_json('" ~ out ~ "/_manifest.json', maximum_object_size = 1000000000)), "
            ~ "unnest(model.files) with ordinality as file(name, ordinal) union all "
            ~ "select model.name, model.rows, col.name, 'column', col.ordinal from (select unnest(models) as model "
            ~ "from read_json('" ~ out ~ "/_manifest.json', maximum_object_size = 1000000000)), "
            ~ "unnest(model.columns) with ordinality as col(name, ordinal) order by 1, 4, 5") -%}
        {%- for row in entries.rows -%}
            {%- if row[0] not in previous -%}
                {%- do previous.update({row[0]: {'files': [], 'rows': row[1], 'columns': []}}) -%}
            {%- endif -%}
            {%- do previous[row[0]][('files' if row[3] == 'file' else 'columns')].append(row[2]) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set present = {} -%}
    {%- for row in run_query("select table_name, column_name, data_type from information_schema.columns "
                             ~ "where table_schema = '" ~ target.schema ~ "' order by table_name, ordinal_position").rows -%}
        {%- if row[0] not in present -%}
            {%- do present.update({row[0]: ([], [])}) -%}
        {%- endif -%}
        {%- do present[row[0]][0].append(row[1]) -%}
        {%- do present[row[0]][1].append(row[2]) -%}
    {%- endfor -%}

    {%- set entries = [] -%}
    {%- for node in published_nodes() if node.alias in present -%}
        {%- set kept = previous.get(node.alias) -%}
        {%- set rebuilt = everything or results is none or node.unique_id in built -%}
        {%- if kept and not rebuilt and kept.columns == present[node.alias][0] -%}
            {%- do entries.append({'name': node.alias, 'files': kept.files, 'rows': kept.rows,
                                   'columns': kept.columns}) -%}
        {%- else -%}
            {%- set columns, types = present[node.alias] -%}
            {%- set file = node.alias ~ '.' ~ invocation_id ~ '.parquet' -%}
            {%- set select = [] -%}
            {%- for column in columns -%}
                {#- a sum of integers is HUGEINT, which Parquet stores as DOUBLE: counts would reach BI tools as
                    floats -#}
                {%- do select.append(('cast(' ~ adapter.quote(column) ~ ' as bigint) as ' ~ adapter.quote(column))
                    if types[loop.index0] in ('HUGEINT', 'UHUGEINT') else adapter.quote(column)) -%}
            {%- endfor -%}
            {%- set relation = adapter.get_relation(database=target.database, schema=target.schema,
                                                    identifier=node.alias) -%}
            {%- do run_query("copy (select " ~ select | join(', ') ~ " from " ~ relation ~ ") to '" ~ out ~ "/"
                             ~ file ~ "' (format parquet)") -%}
            {%- set rows = run_query("select count(*) from " ~ relation).rows[0][0] -%}
            {%- do entries.append({'name': node.alias, 'files': [file], 'rows': rows, 'columns': columns}) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set models = [] -%}
    {%- for e in entries -%}
        {%- do models.append("{'name': " ~ string_literal(e.name) ~ ", 'files': " ~ string_list(e.files)
            ~ ", 'rows': " ~ e.rows ~ "::bigint, 'columns': " ~ string_list(e.columns) ~ "}") -%}
    {%- endfor -%}
    {%- if found.rows[0][0] > 0 -%}
        {%- do run_query("copy (select * from read_json('" ~ out ~ "/_manifest.json', maximum_object_size = "
                         ~ "1000000000)) to '" ~ out ~ "/_manifest.previous.json' (format json)") -%}
    {%- endif -%}
    {%- do run_query("copy (select build.build_id, build.built_at, now() as published_at, "
                     ~ "[" ~ models | join(', ') ~ "] as models from (" ~ build_record ~ ") as build) to '"
                     ~ out ~ "/_manifest.json' (format json)") -%}
    {%- do run_query("copy (" ~ build_record ~ ") to '" ~ out ~ "/_build.json' (format json)") -%}
    {{ log("published " ~ entries | length ~ " marts and seeds to " ~ out, info=false) }}
    {{ return('') }}
{%- endmacro %}


{% macro string_literal(text) -%}
    {{ return("'" ~ (text | string | replace("'", "''")) ~ "'") }}
{%- endmacro %}


{% macro string_list(values) -%}
{#- A DuckDB list literal of strings (varchar[], typed even when empty). -#}
    {%- set quoted = [] -%}
    {%- for v in values -%}
        {%- do quoted.append(string_literal(v)) -%}
    {%- endfor -%}
    {{ return('[' ~ quoted | join(', ') ~ ']::varchar[]') }}
{%- endmacro %}
