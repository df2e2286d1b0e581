{#- A metric point is a metric at a granularity and a cut-off k; either may be null (a metric that has no page level,
    or no cut-off), so two relations match on a point null-safe. Written once: every join of run statistics, scores
    or comparisons on a metric point uses it. -#}

{% macro same_metric_point(left, right) -%}
{{ left }}.metric = {{ right }}.metric
        and {{ left }}.granularity is not distinct from {{ right }}.granularity
        and {{ left }}.k is not distinct from {{ right }}.k
{%- endmacro %}
