{#-
    Aggregates whose result depends on an order, for engines without DuckDB's `agg(x order by ...)`. On Spark the
    values are collected with their sort keys as structs, sorted (structs compare field by field, nulls first as in
    an ascending sort there; the keys used here are never null) and the keys dropped.
-#}

{% macro ordered_list(expression, order_by, distinct=false) -%}
{#- The list of `expression` over the group, ordered by `order_by` (a list of expressions); `distinct`: each value
    once (then the order must be the value itself, as a sorted set is). -#}
    {{ return(adapter.dispatch('ordered_list', 'finrag')(expression, order_by, distinct)) }}
{%- endmacro %}

{% macro default__ordered_list(expression, order_by, distinct=false) -%}
    list({{ 'distinct ' if distinct }}{{ expression }} order by {{ order_by | join(', ') }})
{%- endmacro %}

{% macro spark__ordered_list(expression, order_by, distinct=false) -%}
    {%- if distinct -%}
    array_sort(collect_set({{ expression }}))
    {%- else -%}
    transform(
        array_sort(collect_list(struct({% for key in order_by %}{{ key }} as k{{ loop.index }}, {% endfor %}{{ expression }} as v))),
        x -> x.v
    )
    {%- endif -%}
{%- endmacro %}


{% macro ordered_string_agg(expression, separator, order_by) -%}
{#- string_agg of `expression` with `separator` in the order of `order_by` (a list of expressions); null for no
    non-null value. -#}
    {{ return(adapter.dispatch('ordered_string_agg', 'finrag')(expression, separator, order_by)) }}
{%- endmacro %}

{% macro default__ordered_string_agg(expression, separator, order_by) -%}
    string_agg({{ expression }}, {{ separator }} order by {{ order_by | join(', ') }})
{%- endmacro %}

{% macro spark__ordered_string_agg(expression, separator, order_by) -%}
    nullif(array_join({{ spark__ordered_list(expression, order_by) }}, {{ separator }}), '')
{%- endmacro %}


{% macro nth_largest(expression, n) -%}
{#- The `n`-th largest value of `expression` over the group (the smallest when the group has fewer than `n`
    non-null values; null when it has none), from a heap of `n` values on DuckDB. -#}
    {{ return(adapter.dispatch('nth_largest', 'finrag')(expression, n)) }}
{%- endmacro %}

{% macro default__nth_largest(expression, n) -%}
    list_min(max({{ expression }}, {{ n }}))
{%- endmacro %}

{% macro spark__nth_largest(expression, n) -%}
    array_min(slice(sort_array(collect_list({{ expression }}), false), 1, {{ n }}))
{%- endmacro %}
