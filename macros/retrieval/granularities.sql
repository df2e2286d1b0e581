{#- The retrieval granularities, finest first: the order readers list them in (dim_granularities publishes it). A
    metric's own granularities are the registry's (seeds/metrics.csv); this is only their order. -#}
{% macro retrieval_granularities() %}
    {{ return(['chunk', 'page', 'doc']) }}
{% endmacro %}
