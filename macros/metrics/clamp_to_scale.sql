{% macro clamp_to_scale(expression, low, high) -%}
{#- An interval end cut to its quantity's scale [low, high]: a normal or t interval is symmetric and does not know
    that a mean of [0, 1] scores cannot leave [0, 1], nor a difference of two such means [-1, 1]. Every interval the
    warehouse shows goes through this (its one home). Null stays null: greatest / least skip nulls on both engines,
    so a bare greatest(low, least(high, null)) would make up the scale's end. -#}
    case when {{ expression }} is not null then greatest({{ low }}, least({{ high }}, {{ expression }})) end
{%- endmacro %}
