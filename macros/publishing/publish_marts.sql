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
        {%- if not every_node_succeeded(results) -%}
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
    {#- the manifest is one JSON object: read_json's buffer is twice its maximum_object_size, so that is the file's
        own size (a fixed 1 GB took 1.8 GiB of the build's memory limit, more than a whole 800 MB limit) -#}
    {%- set manifest_bytes = run_query("select size from read_blob('" ~ out ~ "/_manifest.json')").rows[0][0]
        if found.rows[0][0] > 0 else 0 -%}
    {%- set manifest = "read_json('" ~ out ~ "/_manifest.json', maximum_object_size = " ~ (manifest_bytes + 1)
        ~ ", columns = " ~ manifest_columns() ~ ")" -%}
    {%- if found.rows[0][0] > 0 -%}
        {%- set items = run_query(
            "select model.name, model.rows, item.name, 'file' as kind, item.ordinal, null, null from (select unnest("
            ~ "models) as model from " ~ manifest ~ "), unnest(model.files) with ordinality as item(name, ordinal) "
            ~ "union all select model.name, model.rows, item.name, 'column', item.ordinal, null, null from (select "
            ~ "unnest(models) as model from " ~ manifest ~ "), unnest(model.columns) with ordinality as item(name, "
            ~ "ordinal) union all select model.name, model.rows, item.run.file, 'run', 0, item.run.run_id, "
            ~ "item.run.run_version from (select unnest(models) as model from " ~ manifest ~ "), "
            ~ "unnest(model.runs) as item(run) order by 1, 4, 5") -%}
        {%- for row in items.rows -%}
            {%- if row[0] not in previous -%}
                {%- do previous.update({row[0]: {'files': [], 'rows': row[1], 'columns': [], 'runs': {}}}) -%}
            {%- endif -%}
            {%- if row[3] == 'run' -%}
                {%- do previous[row[0]].runs.update({row[5]: (row[6], row[2])}) -%}
            {%- else -%}
                {%- do previous[row[0]][('files' if row[3] == 'file' else 'columns')].append(row[2]) -%}
            {%- endif -%}
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
    {%- set record = adapter.get_relation(database=target.database, schema=target.schema,
                                          identifier='finrag_run_versions') -%}

    {#- nothing else runs while the marts are exported (the build's last hook, or `finrag publish`): the exports use
        every core DuckDB sees, not the one per model the profile gives while dbt builds two at once; then the
        profile's setting again -#}
    {%- set model_threads = run_query("select current_setting('threads')").rows[0][0] -%}
    {%- do run_query("reset threads") -%}
    {%- set entries = [] -%}
    {%- for node in published_nodes() if node.alias in present -%}
        {%- set kept = previous.get(node.alias) -%}
        {%- set columns, types = present[node.alias] -%}
        {%- set same_columns = kept and kept.columns == columns -%}
        {%- set rebuilt = everything or results is none or node.unique_id in built -%}
        {%- set relation = adapter.get_relation(database=target.database, schema=target.schema,
                                                identifier=node.alias) -%}
        {%- set select = [] -%}
        {%- for column in columns -%}
            {#- a sum of integers is HUGEINT, which Parquet stores as DOUBLE: counts would reach BI tools as floats -#}
            {%- do select.append(('cast(' ~ adapter.quote(column) ~ ' as bigint) as ' ~ adapter.quote(column))
                if types[loop.index0] in ('HUGEINT', 'UHUGEINT') else adapter.quote(column)) -%}
        {%- endfor -%}
        {%- set per_run = record is not none and node.config.materialized == 'incremental'
            and 'run_version' in node.columns -%}
        {%- if same_columns and not rebuilt -%}
            {%- do entries.append({'name': node.alias, 'files': kept.files, 'rows': kept.rows,
                                   'columns': kept.columns, 'runs': kept.runs}) -%}
        {%- elif per_run -%}
            {#- a run-versioned model: one file per run; a run whose version the last publishing wrote keeps its
                file, so adding a run writes that run's rows only -#}
            {%- set had = kept.runs if same_columns else {} -%}
            {%- set runs = {} -%}
            {%- set write = [] -%}
            {%- for run_id, run_version in run_query("select run_id, run_version from " ~ record
                ~ " where model_name = '" ~ node.alias ~ "' order by run_id").rows -%}
                {%- if had.get(run_id) and had[run_id][0] == run_version -%}
                    {%- do runs.update({run_id: had[run_id]}) -%}
                {%- else -%}
                    {%- do write.append(run_id) -%}
                    {%- do runs.update({run_id: (run_version, none)}) -%}
                {%- endif -%}
            {%- endfor -%}
            {%- if write -%}
                {%- set folder = node.alias ~ '.' ~ invocation_id -%}
                {%- do run_query("copy (select " ~ select | join(', ') ~ " from " ~ relation ~ " where list_contains("
                    ~ string_list(write) ~ ", run_id)) to '" ~ out ~ "/" ~ folder ~ "' (format parquet, partition_by "
                    ~ "(run_id), write_partition_columns true)") -%}
                {#- the runs' files (a run with no rows has none) -#}
                {%- if run_query("select count(*) from glob('" ~ out ~ "/" ~ folder ~ "/*/*.parquet')").rows[0][0] -%}
                    {%- for file, run_id in run_query("select file_name, min(stats_min_value) from parquet_metadata('"
                        ~ out ~ "/" ~ folder ~ "/*/*.parquet') where path_in_schema = 'run_id' group by file_name"
                        ).rows -%}
                        {#- the path from the run's folder on: DuckDB spells the directory its own way ('./x' as 'x') -#}
                        {%- do runs.update({run_id: (runs[run_id][0], file[file.rfind(folder ~ '/'):])}) -%}
                    {%- endfor -%}
                {%- endif -%}
            {%- endif -%}
            {#- an empty file with the model's columns, so a reader sees its schema even with no run -#}
            {%- set reuse = same_columns and kept.files[0].endswith('.schema.parquet') -%}
            {%- set schema_file = kept.files[0] if reuse else node.alias ~ '.' ~ invocation_id ~ '.schema.parquet' -%}
            {%- if not reuse -%}
                {%- do run_query("copy (select " ~ select | join(', ') ~ " from " ~ relation ~ " limit 0) to '" ~ out
                                 ~ "/" ~ schema_file ~ "' (format parquet)") -%}
            {%- endif -%}
            {%- set run_files = {} -%}
            {%- for run_id, entry in runs.items() if entry[1] -%}
                {%- do run_files.update({run_id: entry}) -%}
            {%- endfor -%}
            {%- do entries.append({'name': node.alias, 'files': [schema_file] + run_files.values() | map(attribute=1)
                                   | list, 'rows': run_query("select count(*) from " ~ relation).rows[0][0],
                                   'columns': columns, 'runs': run_files}) -%}
        {%- else -%}
            {%- set file = node.alias ~ '.' ~ invocation_id ~ '.parquet' -%}
            {%- do run_query("copy (select " ~ select | join(', ') ~ " from " ~ relation ~ ") to '" ~ out ~ "/"
                             ~ file ~ "' (format parquet)") -%}
            {%- set rows = run_query("select count(*) from " ~ relation).rows[0][0] -%}
            {%- do entries.append({'name': node.alias, 'files': [file], 'rows': rows, 'columns': columns,
                                   'runs': {}}) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set models = [] -%}
    {%- for e in entries -%}
        {%- set runs = [] -%}
        {%- for run_id, entry in e.runs.items() -%}
            {%- do runs.append("{'run_id': " ~ string_literal(run_id) ~ ", 'run_version': " ~ string_literal(entry[0])
                ~ ", 'file': " ~ string_literal(entry[1]) ~ "}") -%}
        {%- endfor -%}
        {%- do models.append("{'name': " ~ string_literal(e.name) ~ ", 'files': " ~ string_list(e.files)
            ~ ", 'rows': " ~ e.rows ~ "::bigint, 'columns': " ~ string_list(e.columns) ~ ", 'runs': ["
            ~ runs | join(', ') ~ "]::struct(run_id varchar, run_version varchar, file varchar)[]}") -%}
    {%- endfor -%}
    {%- if found.rows[0][0] > 0 -%}
        {%- do run_query("copy (select * from " ~ manifest ~ ") to '" ~ out ~ "/_manifest.previous.json' (format json)") -%}
    {%- endif -%}
    {%- do run_query("copy (select build.build_id, build.built_at, now() as published_at, "
                     ~ "[" ~ models | join(', ') ~ "] as models from (" ~ build_record ~ ") as build) to '"
                     ~ out ~ "/_manifest.json' (format json)") -%}
    {#- for BI tools and DuckDB clients: one view per published node over the manifest's files, as a SQL script
        (`duckdb -init _views.sql`, or run it into a views database); rewritten by a rename like the manifest -#}
    {%- set views = [] -%}
    {%- for e in entries -%}
        {%- set paths = [] -%}
        {%- for file in e.files -%}
            {%- do paths.append(out ~ '/' ~ file) -%}
        {%- endfor -%}
        {%- do views.append("(" ~ string_literal("create or replace view " ~ adapter.quote(e.name)
            ~ " as select * from read_parquet(" ~ string_list(paths) ~ ", union_by_name = true);") ~ ")") -%}
    {%- endfor -%}
    {%- if views -%}
        {%- do run_query("copy (select * from (values " ~ views | join(', ') ~ ")) to '" ~ out ~ "/_views.sql' "
                         ~ "(format csv, header false, quote '', escape '', delimiter e'\\x01')") -%}
    {%- endif -%}
    {%- do run_query("copy (" ~ build_record ~ ") to '" ~ out ~ "/_build.json' (format json)") -%}
    {%- do run_query("set threads = " ~ model_threads) -%}
    {{ log("published " ~ entries | length ~ " marts and seeds to " ~ out, info=false) }}
    {{ return('') }}
{%- endmacro %}


{% macro manifest_columns() -%}
{#- The manifest's schema, as read_json's columns: one object with the build and every published node. -#}
    {{ return("{build_id: 'VARCHAR', built_at: 'VARCHAR', published_at: 'VARCHAR', models: 'STRUCT(name VARCHAR, "
              ~ "files VARCHAR[], \"rows\" BIGINT, columns VARCHAR[], runs STRUCT(run_id VARCHAR, run_version VARCHAR, "
              ~ "file VARCHAR)[])[]'}") }}
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

{% macro every_node_succeeded(results) -%}
{#- An on-run-end hook's results: true when no node failed, errored or was skipped. -#}
    {{ return(results | rejectattr('status', 'in', ['success', 'pass', 'warn', 'no-op']) | list | length == 0) }}
{%- endmacro %}
