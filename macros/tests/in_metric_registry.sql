{% test in_metric_registry(model, column_name, family=none, granularity_column=none) %}
{#-
    Every non-null value of the column names a metric of the registry (int_metric_registry: the seed `metrics` and the declared ones), of `family` when given;
    with granularity_column, the row's granularity is one of that metric's granularities (doc_rec only at doc).
    The data-driven form of an accepted_values list of metric names: a metric added to the registry is accepted
    everywhere at once.
-#}
with child as (

    select * from {{ model }}

)

select
    child.{{ column_name }}{% if granularity_column %},
    child.{{ granularity_column }}{% endif %}
from child
left join {{ ref('int_metric_registry') }} as metrics
    on metrics.metric = child.{{ column_name }}
    {%- if family %}
    and metrics.family = '{{ family }}'
    {%- endif %}
where child.{{ column_name }} is not null
  and (
    metrics.metric is null
    {%- if granularity_column %}
    or not {{ list_has(split_string("coalesce(metrics.granularities, '')", '|'), 'child.' ~ granularity_column) }}
    {%- endif %}
  )
{% endtest %}
