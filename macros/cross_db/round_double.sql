{% macro round_double(expression, digits) -%}
{#- A double rounded to `digits` decimals as DuckDB's round does: round(x * 10^digits) / 10^digits, half away from
    zero on the binary value. Spark's round(x, d) rounds the shortest decimal text of x half up instead, so a value
    that prints as a tie rounds differently: 0.5005 (binary 0.50049999...) is 0.5 on DuckDB, 0.501 on Spark (about
    1 in 400 of such values). Spark's round(x) to an integer agrees with DuckDB's, hence the form there. -#}
    {{ return(adapter.dispatch('round_double', 'finrag')(expression, digits)) }}
{%- endmacro %}

{% macro default__round_double(expression, digits) -%}
    round({{ expression }}, {{ digits }})
{%- endmacro %}

{% macro spark__round_double(expression, digits) -%}
    round(({{ expression }}) * {{ 10 ** digits }}) / {{ 10 ** digits }}
{%- endmacro %}
