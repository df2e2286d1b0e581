{#-
    Sums and means of doubles that do not depend on the order rows arrive in. DuckDB aggregates in parallel, so a
    double sum can differ in its last bit between two builds, or between two identical runs of one build (even a
    Kahan sum, fsum, did here). Summing DECIMAL(38, 24) is exact integer arithmetic, so the result is the same
    whatever the order; each term is rounded at 1e-24 first, far below the 1e-9 the metrics are checked to, and
    terms up to 1e14 fit. The sum stays in its exact type, so coarser groupings can sum the sums again; exact_mean
    divides them once, at the end. Engines without exact decimals of that size fall back to sum.
-#}

{% macro exact_sum(expression, where=none) -%}
    {{ return(adapter.dispatch('exact_sum', 'finrag')(expression, where)) }}
{%- endmacro %}

{% macro default__exact_sum(expression, where=none) -%}
    sum({{ expression }}){% if where is not none %} filter (where {{ where }}){% endif %}
{%- endmacro %}

{% macro duckdb__exact_sum(expression, where=none) -%}
    sum(cast({{ expression }} as decimal(38, 24))){% if where is not none %} filter (where {{ where }}){% endif %}
{%- endmacro %}


{% macro exact_mean(sums, counts) -%}
{#- The mean over a group of rows holding exact sums (exact_sum) and their counts: the sums' sum over the counts'
    sum, as double; null when the count is 0. -#}
    cast(sum({{ sums }}) as double) / nullif(sum({{ counts }}), 0)
{%- endmacro %}

{% macro spark__exact_sum(expression, where=none) -%}
    {{ duckdb__exact_sum(expression, where) }}
{%- endmacro %}
