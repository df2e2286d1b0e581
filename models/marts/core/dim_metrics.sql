-- The metric registry (int_metric_registry: the seed `metrics` and the metrics external judge runs declared) as a
-- published dimension, one row per metric: the dashboard and
-- `finrag report` read their metric lists, labels, order, granularities and trec_eval names from here (the Parquet
-- export, the warehouse) instead of writing them down. Granularities become a list; nothing else is derived.

with metrics as (

    select * from {{ ref('int_metric_registry') }}

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
        case when granularities is not null then {{ split_string('granularities', '|') }} end as granularities,
        score_column,
        trec_eval_name,
        trec_eval_cut_name,
        judge_family,
        na_value,
        needs_passages,
        needs_numeric_reference,
        continuous,
        source_name
    from metrics

)

select * from final
