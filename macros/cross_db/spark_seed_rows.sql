{#-
    dbt-spark's seed loader for the `session` method binds values by pasting them between quotes: an apostrophe in
    a seed (the metric descriptions have several) breaks the insert, and an empty cell lands as the text 'None'.
    This one writes each value as an escaped SQL literal, null as null, cast to the column's type as dbt-spark does.
-#}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {% for row in chunk -%}
                ({%- for value in row -%}
                    {%- set type = column_override.get(agate_table.column_names[loop.index0],
                                                       adapter.convert_type(agate_table, loop.index0)) -%}
                    cast({{ spark_seed_literal(value) }} as {{ type }}){{ ',' if not loop.last }}
                {%- endfor -%}){{ ',' if not loop.last }}
            {% endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- if loop.first -%}
            {%- do statements.append(sql) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(statements[0] if statements else '') }}
{% endmacro %}


{% macro spark_seed_literal(value) -%}
    {%- if value is none -%}
        null
    {%- elif value is number -%}
        {{ value }}
    {%- else -%}
        '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
    {%- endif -%}
{%- endmacro %}
