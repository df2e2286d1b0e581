{% test not_null_columns(model, columns) %}
{#-
    No listed column holds a null. One test per model instead of one not_null test per column: each test node costs
    dbt a query and its own overhead, and most models had five or more (bench/retrieval_metrics). One branch per
    column, each filtered on `is null` (not one aggregate over every row), so the engine skips whatever its column
    statistics show has no null, as it did for the per-column tests.
    Fails with one row per column that holds nulls: its name and how many rows are null.
-#}
with columns_with_nulls as (
    {% for column in columns %}
    select
        '{{ column }}' as column_name,
        count(*) as n_null
    from {{ model }}
    where {{ column }} is null
    having count(*) > 0
    {{ "union all" if not loop.last }}
    {%- endfor %}

)

select * from columns_with_nulls
{% endtest %}
