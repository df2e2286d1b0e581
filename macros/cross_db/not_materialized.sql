{#-
    `with name as {{ not_materialized() }} (...)`: a CTE the engine should inline in each consumer instead of
    materialising it once. DuckDB materialises a CTE read twice; when one of the reads is pruned (a join whose other
    side is empty), inlining spares writing every row of it. Engines without the hint inline or decide themselves.
-#}
{% macro not_materialized() -%}
    {{ return(adapter.dispatch('not_materialized', 'finrag')()) }}
{%- endmacro %}

{% macro default__not_materialized() -%}
{%- endmacro %}

{% macro duckdb__not_materialized() -%}
    not materialized
{%- endmacro %}
