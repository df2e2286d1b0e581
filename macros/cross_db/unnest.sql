{#- A list's elements as rows, in a select list (DuckDB unnest; Spark's generators explode / inline). -#}

{% macro unnest_list(list) -%}
{#- One row per element of `list` (none for an empty or null list), in a select list. -#}
    {{ return(adapter.dispatch('unnest_list', 'finrag')(list)) }}
{%- endmacro %}

{% macro default__unnest_list(list) -%}
    unnest({{ list }})
{%- endmacro %}

{% macro spark__unnest_list(list) -%}
    explode({{ list }})
{%- endmacro %}


{% macro unnest_with_ordinal(list, value_name, ordinal_name) -%}
{#- In a select list: two columns, `value_name` (each element of `list`) and `ordinal_name` (its 1-based position),
    one row per element. DuckDB zips two unnests of equal length; Spark allows one generator per select, so its
    elements and positions go through inline() as structs (posexplode would count from 0). -#}
    {{ return(adapter.dispatch('unnest_with_ordinal', 'finrag')(list, value_name, ordinal_name)) }}
{%- endmacro %}

{% macro default__unnest_with_ordinal(list, value_name, ordinal_name) -%}
    unnest({{ list }}) as {{ value_name }},
        unnest(generate_series(1, len({{ list }}))) as {{ ordinal_name }}
{%- endmacro %}

{% macro spark__unnest_with_ordinal(list, value_name, ordinal_name) -%}
    inline(transform({{ list }}, (element, position) -> named_struct(
        '{{ value_name }}', element, '{{ ordinal_name }}', cast(position + 1 as bigint)
    )))
{%- endmacro %}


{% macro list_size(list) -%}
{#- The number of elements of `list`, null for a null list: DuckDB len; Spark array_size (size is -1 for null
    outside ANSI mode). -#}
    {{ return(adapter.dispatch('list_size', 'finrag')(list)) }}
{%- endmacro %}

{% macro default__list_size(list) -%}
    len({{ list }})
{%- endmacro %}

{% macro spark__list_size(list) -%}
    array_size({{ list }})
{%- endmacro %}
