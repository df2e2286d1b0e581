-- The metric registry (seed `metrics`) holds every metric once; its columns only mean something for some families,
-- and the readers rely on that: a scale whose max exceeds its min, a not-applicable value off the scale, a
-- score_column for every metric that is a column of a fact (all but the judged ones), granularities only from the
-- rules' granularities (python_jobs/core/rules.yml) and only for the families that have them, trec_eval names only
-- for retrieval metrics, the judged-only columns only on judged rows, and the tool's own name (source_name) on the
-- Ragas and DeepEval metrics only. Returns the rows that break a rule, with the rule.


{%- set known_granularities = "'" ~ granularities() | join("', '") ~ "'" %}

with metrics as (

    select * from {{ ref('metrics') }}

),

granularity_values as (

    select
        metric,
        {{ unnest_list(split_string('granularities', '|')) }} as granularity
    from metrics
    where granularities is not null

),

broken as (

    select
        metric,
        'scale_max must exceed scale_min' as rule
    from metrics
    where not scale_max > scale_min

    union all

    select
        metric,
        'na_value must lie off the scale' as rule
    from metrics
    where na_value between scale_min and scale_max

    union all

    select
        metric,
        'a fact column metric needs its score_column (judged metrics must not have one)' as rule
    from metrics
    where (family = 'judged') = (score_column is not null)

    union all

    select
        metric,
        'granularities only for retrieval and evidence_overlap metrics, and required there' as rule
    from metrics
    where (family in ('retrieval', 'evidence_overlap')) = (granularities is null)

    union all

    select
        metric,
        'unknown granularity ' || granularity as rule
    from granularity_values
    where granularity not in ({{ known_granularities }})

    union all

    select
        metric,
        'trec_eval names only for retrieval metrics' as rule
    from metrics
    where family <> 'retrieval'
        and (trec_eval_name is not null or trec_eval_cut_name is not null)

    union all

    select
        metric,
        'source_name on the Ragas and DeepEval metrics, and only there' as rule
    from metrics
    where (coalesce(judge_family, '') in ('ragas', 'deepeval')) = (source_name is null)

    union all

    select
        metric,
        'judged-only columns set on a metric that is not judged' as rule
    from metrics
    where family <> 'judged'
        and (
            judge_family is not null or na_value is not null or needs_passages is not null
            or needs_numeric_reference is not null or continuous is not null
        )

)

select * from broken
