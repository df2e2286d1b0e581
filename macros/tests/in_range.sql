{% test in_range(model, columns) %}
{#-
    Every non-null value of each listed column lies within its [min_value, max_value] (either bound optional).
    One test per model, as not_null_columns: each test node costs dbt a query and its own overhead (a Spark build of
    the test home spent ~0.3 s per data test), and a model with bounded columns has several.
    Fails with one row per column that holds a value out of its bounds: its name, the bounds and how many rows.
-#}
with columns_out_of_range as (
    {% for column, bounds in columns.items() %}
    {%- set min_value, max_value = bounds.get('min_value'), bounds.get('max_value') %}
    select
        '{{ column }}' as column_name,
        {{ 'null' if min_value is none else min_value }} as min_value,
        {{ 'null' if max_value is none else max_value }} as max_value,
        count(*) as n_out_of_range
    from {{ model }}
    where {{ column }} is not null
        and (
            {% if min_value is not none %}{{ column }} < {{ min_value }}{% else %}false{% endif %}
            or {% if max_value is not none %}{{ column }} > {{ max_value }}{% else %}false{% endif %}
        )
    having count(*) > 0
    {{ "union all" if not loop.last }}
    {%- endfor %}

)

select * from columns_out_of_range
{% endtest %}
