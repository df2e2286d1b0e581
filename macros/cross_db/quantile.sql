{% macro continuous_quantile(expression, fraction) -%}
{#- The `fraction` quantile of `expression` over the group, interpolated linearly between the two nearest values
    (nulls skipped), as a double: DuckDB quantile_cont, Spark percentile (the same interpolation). -#}
    {{ return(adapter.dispatch('continuous_quantile', 'finrag')(expression, fraction)) }}
{%- endmacro %}

{% macro default__continuous_quantile(expression, fraction) -%}
    quantile_cont({{ expression }}, {{ fraction }})
{%- endmacro %}

{% macro spark__continuous_quantile(expression, fraction) -%}
    percentile({{ expression }}, {{ fraction }})
{%- endmacro %}
