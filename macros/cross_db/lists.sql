{#- List functions DuckDB and Spark spell differently (Spark calls lists arrays). -#}

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


{% macro named_struct(fields) -%}
{#- A struct of named fields from {name: expression} (in the dict's order): DuckDB struct_pack, Spark
    named_struct. -#}
    {{ return(adapter.dispatch('named_struct', 'finrag')(fields)) }}
{%- endmacro %}

{% macro default__named_struct(fields) -%}
    struct_pack({% for name, expression in fields.items() %}{{ name }} := {{ expression }}{{ ', ' if not loop.last }}{% endfor %})
{%- endmacro %}

{% macro spark__named_struct(fields) -%}
    named_struct({% for name, expression in fields.items() %}'{{ name }}', {{ expression }}{{ ', ' if not loop.last }}{% endfor %})
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
