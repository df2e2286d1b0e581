{#-
    Sums and means of doubles that do not depend on the order rows arrive in. DuckDB aggregates in parallel, so a
    double sum can differ in its last bit between two builds, or between two identical runs of one build (even a
    Kahan sum, fsum, did here). Summing DECIMAL(38, 24) is exact integer arithmetic, so the result is the same
    whatever the order; each term is rounded at 1e-24 first, far below the 1e-9 the metrics are checked to, and
    terms up to 1e14 fit. `where` is the aggregate's FILTER clause (it must sit inside the cast). Engines without exact decimals of that size fall back to sum / avg.
-#}

{% macro exact_sum(expression, where=none) -%}
    {{ return(adapter.dispatch('exact_sum', 'finrag')(expression, where)) }}
{%- endmacro %}

{% macro default__exact_sum(expression, where=none) -%}
    sum({{ expression }}){% if where is not none %} filter (where {{ where }}){% endif %}
{%- endmacro %}

{% macro duckdb__exact_sum(expression, where=none) -%}
    cast(sum(cast({{ expression }} as decimal(38, 24))){% if where is not none %} filter (where {{ where }}){% endif %} as double)
{%- endmacro %}


{% macro exact_avg(expression, where=none) -%}
    {{ return(adapter.dispatch('exact_avg', 'finrag')(expression, where)) }}
{%- endmacro %}

{% macro default__exact_avg(expression, where=none) -%}
    avg({{ expression }}){% if where is not none %} filter (where {{ where }}){% endif %}
{%- endmacro %}

{% macro duckdb__exact_avg(expression, where=none) -%}
    cast(avg(cast({{ expression }} as decimal(38, 24))){% if where is not none %} filter (where {{ where }}){% endif %} as double)
{%- endmacro %}


{% macro exact_partial_sum(expression, where=none) -%}
{#- exact_sum left in its exact type, for sums that are summed again (exact_sum_mean divides them at the end). -#}
    {{ return(adapter.dispatch('exact_partial_sum', 'finrag')(expression, where)) }}
{%- endmacro %}

{% macro default__exact_partial_sum(expression, where=none) -%}
    sum({{ expression }}){% if where is not none %} filter (where {{ where }}){% endif %}
{%- endmacro %}

{% macro duckdb__exact_partial_sum(expression, where=none) -%}
    sum(cast({{ expression }} as decimal(38, 24))){% if where is not none %} filter (where {{ where }}){% endif %}
{%- endmacro %}


{% macro exact_sum_mean(partial_sum, count) -%}
{#- The mean from partial sums (exact_partial_sum) and counts summed over a group: sum / count as double, null when
    the count is 0. -#}
    cast(sum({{ partial_sum }}) as double) / nullif(sum({{ count }}), 0)
{%- endmacro %}
