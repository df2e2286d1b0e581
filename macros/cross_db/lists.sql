{#- List functions DuckDB and Spark spell differently (Spark calls lists arrays; its generators, explode and inline,
    stand where DuckDB's unnest does, one per select list). -#}

{% macro list_has(list, value) -%}
{#- True when `list` holds `value` (DuckDB list_contains, Spark array_contains). -#}
    {{ return(adapter.dispatch('list_has', 'finrag')(list, value)) }}
{%- endmacro %}

{% macro default__list_has(list, value) -%}
    list_contains({{ list }}, {{ value }})
{%- endmacro %}

{% macro spark__list_has(list, value) -%}
    array_contains({{ list }}, {{ value }})
{%- endmacro %}


{% macro unnest_series(start, stop) -%}
{#- In a select list: one row per integer start..stop (inclusive; none when stop < start), as DuckDB's
    unnest(generate_series()); Spark's sequence() would count down instead, hence the filter to an empty array. -#}
    {{ return(adapter.dispatch('unnest_series', 'finrag')(start, stop)) }}
{%- endmacro %}

{% macro default__unnest_series(start, stop) -%}
    unnest(generate_series({{ start }}, {{ stop }}))
{%- endmacro %}

{% macro spark__unnest_series(start, stop) -%}
    explode(case when {{ stop }} >= {{ start }} then sequence({{ start }}, {{ stop }}) else array() end)
{%- endmacro %}


{% macro list_element(list, position) -%}
{#- The element at 1-based `position`, null past the end: DuckDB list[i]; Spark's list[i] counts from 0 and
    raises past the end under ANSI mode, try_element_at does neither. -#}
    {{ return(adapter.dispatch('list_element', 'finrag')(list, position)) }}
{%- endmacro %}

{% macro default__list_element(list, position) -%}
    {{ list }}[{{ position }}]
{%- endmacro %}

{% macro spark__list_element(list, position) -%}
    try_element_at({{ list }}, {{ position }})
{%- endmacro %}


{% macro list_join(list, separator) -%}
{#- The list's elements joined by `separator`, nulls skipped: DuckDB array_to_string, Spark array_join. -#}
    {{ return(adapter.dispatch('list_join', 'finrag')(list, separator)) }}
{%- endmacro %}

{% macro default__list_join(list, separator) -%}
    array_to_string({{ list }}, {{ separator }})
{%- endmacro %}

{% macro spark__list_join(list, separator) -%}
    array_join({{ list }}, {{ separator }})
{%- endmacro %}


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
