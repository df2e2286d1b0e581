-- The retrieval granularities in the order readers list them, finest first (macros/retrieval/granularities.sql, the
-- one place the order is written): the dashboard's granularity pickers read it instead of a list of their own. Which
-- granularities a metric exists at is the registry's (dim_metrics.granularities).

with granularities as (

    {% for granularity in retrieval_granularities() %}
        select
            '{{ granularity }}' as granularity,
            cast({{ loop.index }} as integer) as display_order
        {{ "union all" if not loop.last }}
    {% endfor %}

)

select * from granularities
