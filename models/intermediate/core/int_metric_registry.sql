-- The metric registry as every reader of a judged metric's scale and direction needs it: the seed `metrics` (every
-- metric the project computes, and the Ragas / DeepEval metrics it knows, declared once) and the metrics external
-- judge runs declared with themselves (lake metric_declarations: a DeepEval GEval metric, a Ragas metric named on the
-- command line), one row each. The landing checks that every declaration of a metric agrees with the others and
-- that no seed metric is declared again; the earliest declaration stands for the metric. Declared metrics are judged,
-- continuous, have no not-applicable value and come after the seed's in display order (by name).

with seed as (

    select * from {{ ref('metrics') }}

),

declarations as (

    select
        metric,
        source_name,
        judge_family,
        label,
        higher_is_better,
        scale_min,
        scale_max,
        continuous,
        description,
        row_number() over (partition by metric order by created_at, judge_run_id) as declaration_order
    from {{ ref('stg_lake__metric_declarations') }}
    where metric not in (select seed.metric from seed)

),

declared as (

    select
        metric,
        source_name,
        judge_family,
        label,
        higher_is_better,
        scale_min,
        scale_max,
        continuous,
        description,
        (select max(seed.display_order) from seed)
        + row_number() over (order by metric) as display_order
    from declarations
    where declaration_order = 1

),

final as (

    select
        metric,
        family,
        label,
        description,
        display_order,
        higher_is_better,
        pass_threshold,
        scale_min,
        scale_max,
        granularities,
        score_column,
        trec_eval_name,
        trec_eval_cut_name,
        judge_family,
        na_value,
        needs_passages,
        needs_numeric_reference,
        continuous,
        source_name
    from seed

    union all

    select
        metric,
        'judged' as family,
        label,
        description,
        cast(display_order as integer) as display_order,
        higher_is_better,
        -- no pass threshold is declared with a metric: its questions have no pass / fail in run vs run
        cast(null as double) as pass_threshold,
        scale_min,
        scale_max,
        cast(null as string) as granularities,
        cast(null as string) as score_column,
        cast(null as string) as trec_eval_name,
        cast(null as string) as trec_eval_cut_name,
        judge_family,
        cast(null as double) as na_value,
        false as needs_passages,
        false as needs_numeric_reference,
        continuous,
        source_name
    from declared

)

select * from final
