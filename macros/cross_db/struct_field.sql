{% macro struct_field(struct, field) -%}
{#- The field `field` (a name) of the struct expression `struct`: DuckDB struct_extract, Spark's dot access. -#}
    {{ return(adapter.dispatch('struct_field', 'finrag')(struct, field)) }}
{%- endmacro %}

{% macro default__struct_field(struct, field) -%}
    struct_extract({{ struct }}, '{{ field }}')
{%- endmacro %}

{% macro spark__struct_field(struct, field) -%}
    {{ struct }}.{{ field }}
{%- endmacro %}
