{% test known_in_dataset(model, column_name, to, field) %}
{#-
    Like `relationships`, but only for datasets whose parent table has rows: a TREC-only dataset
    (qrels and runs without a corpus) is valid (SPEC §7).
-#}
with children as (
    -- a CTE, so that a where-filtered model (a subquery aliased dbt_subquery) can be aliased again
    select * from {{ model }}
),

parents as (
    select dataset, {{ field }} as parent_key from {{ to }}
),

datasets_with_parents as (
    select distinct dataset from parents
)

select child.dataset, child.{{ column_name }}
from children as child
inner join datasets_with_parents using (dataset)
left join parents
    on parents.dataset = child.dataset
    and parents.parent_key = child.{{ column_name }}
where child.{{ column_name }} is not null
  and parents.parent_key is null
{% endtest %}
