{% macro source(source_name, table_name) -%}
{#- dbt's source(), but a lake table on DuckDB is its Parquet files under the home the build runs in:
    read_parquet('$FINRAG_HOME/lake/<table>/*/*.parquet', union_by_name = true). The home is read here, when a model
    compiles, rather than in the sources' yml: a yml naming $FINRAG_HOME is parsed again for every new home (~3.4 s
    of a build), while this keeps one parse for all. At parse time it is dbt's own relation (the dependency is all
    dbt records then); on Spark the lake tables are the `lake` database's views (spark_session.py). -#}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- if execute and source_name == 'lake' and target.type == 'duckdb' -%}
        {%- set location = env_var('FINRAG_HOME', 'warehouse') ~ '/lake/' ~ relation.identifier ~ '/*/*.parquet' -%}
        {%- set relation = relation.incorporate(external="read_parquet('" ~ location ~ "', union_by_name = true)") -%}
    {%- endif -%}
    {{ return(relation) }}
{%- endmacro %}
