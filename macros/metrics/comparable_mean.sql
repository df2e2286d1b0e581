{% macro comparable_mean(expression) -%}
{#- A mean as ranks and ties compare it: rounded to 12 decimals. The same mean summed in another order (another
    engine, another partitioning) differs in its last bits; compared raw, two runs tie on one engine and not on the
    other. Every rank, best and tie over means goes through this. -#}
    {{ round_double(expression, 12) }}
{%- endmacro %}
