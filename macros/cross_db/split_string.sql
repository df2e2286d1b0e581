{% macro split_string(string, delimiter) -%}
{#- The list of the parts of `string` between occurrences of `delimiter` (plain text, not SQL: '|'), empty parts
    kept: DuckDB string_split. Spark's split takes a regular expression, so each character of the delimiter is
    matched literally there (a one-character class, or a backslash before the characters a class cannot hold). -#}
    {{ return(adapter.dispatch('split_string', 'finrag')(string, delimiter)) }}
{%- endmacro %}

{% macro default__split_string(string, delimiter) -%}
    string_split({{ string }}, '{{ delimiter | replace("'", "''") }}')
{%- endmacro %}

{% macro spark__split_string(string, delimiter) -%}
    {%- set pattern = [] -%}
    {%- for character in delimiter -%}
        {%- if character == '\\' -%}
            {%- do pattern.append('\\\\\\\\') -%}
        {%- elif character in ['^', '[', ']'] -%}
            {%- do pattern.append('\\\\' ~ character) -%}
        {%- elif character == "'" -%}
            {%- do pattern.append("[\\']") -%}
        {%- else -%}
            {%- do pattern.append('[' ~ character ~ ']') -%}
        {%- endif -%}
    {%- endfor -%}
    split({{ string }}, '{{ pattern | join('') }}')
{%- endmacro %}
