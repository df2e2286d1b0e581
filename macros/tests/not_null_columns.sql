{% test not_null_columns(model, columns) %}
{#-
    No listed column holds a null. One test (one scan) per model instead of one not_null test per column: each
    test node costs dbt a query and its own overhead, and most models had five or more (bench/retrieval_metrics).
    Fails with one row per column that holds nulls: its name and how many rows are null.
-#}
with null_counts as (

    select
    {%- for column in columns %}
        sum(case when {{ column }} is null then 1 else 0 end) as n_null_{{ loop.index }}{{ "," if not loop.last }}
    {%- endfor %}
    from {{ model }}

),

columns_with_nulls as (
    {% for column in columns %}
    select
        '{{ column }}' as column_name,
        n_null_{{ loop.index }} as n_null
    from null_counts
    {{ "union all" if not loop.last }}
    {%- endfor %}

)

select * from columns_with_nulls
where n_null > 0
{% endtest %}
