-- The retrieval granularities in the order readers list them, finest first (the rules' order:
-- python_jobs/core/rules.yml, through its generated macro): the dashboard's granularity pickers read it instead of a
-- list of their own. Which granularities a metric exists at is the registry's (dim_metrics.granularities).

with granularities as (

    {% for granularity in granularities() %}
        select
            '{{ granularity }}' as granularity,
            cast({{ loop.index }} as integer) as display_order
        {{ "union all" if not loop.last }}
    {% endfor %}

)

select * from granularities
