{% macro source(source_name, table_name) -%}
{#- dbt's source(), but a lake table on DuckDB is its Parquet files under the home the build runs in (lake_files):
    read_parquet('<files>', union_by_name = true). The home is read when a model compiles, not in the sources' yml:
    a yml naming $FINRAG_HOME is parsed again for every new home (~3.4 s of a build), while this keeps one parse for
    all. At parse time it is dbt's own relation (the dependency is all dbt records then); on Spark the lake tables
    are the `lake` database's views (spark_session.py). -#}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- if execute and source_name == 'lake' and target.type == 'duckdb' -%}
        {%- set relation = relation.incorporate(
            external="read_parquet('" ~ lake_files(table_name) ~ "', union_by_name = true)") -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}

{% macro lake_files(table) -%}
{#- The glob of a lake table's files in the home being built: $FINRAG_HOME/lake/<table>/<partition>/<file>.parquet.
    Read only when a model compiles (empty at parse time), so no parsed file names the home. -#}
    {{ return(env_var('FINRAG_HOME', 'warehouse') ~ '/lake/' ~ table ~ '/*/*.parquet' if execute else '') }}
{%- endmacro %}
