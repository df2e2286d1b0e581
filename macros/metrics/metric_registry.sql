{% macro metric_registry() %}
{#-
    The metric registry (seed `metrics`) as a list of dicts {metric, family, score_column}, in display order: what
    a model needs to write one select per metric over a fact's wide score columns. The rows are read at run time
    (run_query), so a model that calls this declares `-- depends_on: {{ ref('metrics') }}` (the seed is built
    first); at parse time (not execute) the list is empty. A dbt unit test of such a model gives
    `input: ref('metrics')` and overrides this macro with the rows it needs (overrides: macros: metric_registry:
    [...]): unit tests do not run introspective queries.
-#}
{%- if not execute -%}
    {{ return([]) }}
{%- endif -%}
{%- set rows_sql -%}
    select metric, family, score_column
    from {{ ref('metrics') }}
    order by display_order, metric
{%- endset -%}
{%- set registry = [] -%}
{%- for row in run_query(rows_sql).rows -%}
    {%- do registry.append({'metric': row['metric'], 'family': row['family'], 'score_column': row['score_column']}) -%}
{%- endfor -%}
{{ return(registry) }}
{% endmacro %}


{% macro metric_columns(family) %}
{#-
    (score_column, metric) pairs of one family, in display order: the column of the family's per-question fact that
    holds each metric (fct_retrieval_question_scores.ap holds map) and the metric's name in the marts.
-#}
{%- set columns = [] -%}
{%- for row in metric_registry() if row['family'] == family -%}
    {%- do columns.append((row['score_column'], row['metric'])) -%}
{%- endfor -%}
{{ return(columns) }}
{% endmacro %}
