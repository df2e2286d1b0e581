-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- The leaderboard's means by question slice (long format): run x dimension x value x granularity x metric x k.
-- Dimensions: the rules' slice dimensions (python_jobs/core/rules.yml) - doc_type / company / sector of the question's
-- primary gold document, the topic levels as the topic path down to that level ('a/b/c') - and their crossings
-- (topic_x_task: the OmniEval topic x task matrix at the second topic level). Questions without a value for a dimension
-- are left out of that dimension; a question missing from dim_questions (a TREC-only dataset: qrels and runs without
-- queries) is sliced by the run's dataset alone.

{{ config(run_incremental_config(tags=['retrieval_metrics'])) }}

-- the metrics averaged (retrieval_metric_sums) are the registry's retrieval family
-- depends_on: {{ ref('metrics') }}

{%- set dimensions = slice_dimensions() %}
{%- set crossings = slice_crossings() %}

with runs as (

    {{ retrieval_pending_runs() }}

),

question_scores as (

    select question_scores.*
    from {{ ref('fct_retrieval_question_scores') }} as question_scores
    inner join runs on question_scores.run_id = runs.run_id

),

questions as (

    select
        question_id,
        dataset,
        doc_type,
        question_type,
        task,
        topic_l1,
        case when topic_l2 is not null then topic_l1 || '/' || topic_l2 end as topic_l2,
        case when topic_l3 is not null then topic_l1 || '/' || topic_l2 || '/' || topic_l3 end as topic_l3,
        company,
        sector,
        gold_without_content
    from {{ ref('dim_questions') }}

),

sliced_scores as (

    select
        question_scores.*,
        coalesce(questions.dataset, runs.dataset) as dataset,
        coalesce(questions.gold_without_content, false) as gold_without_content,
        {%- for dimension in dimensions if dimension != 'dataset' %}
        questions.{{ dimension }}{{ "," if not loop.last }}
        {%- endfor %}
    from question_scores
    inner join runs on question_scores.run_id = runs.run_id
    left join questions
        on runs.dataset = questions.dataset
        and question_scores.question_id = questions.question_id

),

-- exact sums and counts per combination of slice values: the grouping sets below add these few rows up instead
-- of reading every question score once per dimension
slice_sums as (

    select
        run_id,
        granularity,
        k,
        {%- for dimension in dimensions %}
        {{ dimension }},
        {%- endfor %}
        {{ retrieval_metric_sums() }}
    from sliced_scores
    group by run_id, granularity, k, {{ dimensions | join(', ') }}

),

slice_means as (

    {{ slice_unpivot('slice_sums', ['run_id', 'granularity', 'k'], retrieval_metric_means(), crossings) }}

),

metric_means as (

    {{ retrieval_unpivot_means('slice_means', ['run_id', 'dimension', 'dimension_value', 'granularity']) }}

),

final as (

    select
        metric_means.run_id,
        metric_means.dimension,
        metric_means.dimension_value,
        metric_means.granularity,
        metric_means.metric,
        metric_means.k,
        metric_means.mean,
        metric_means.n_questions,
        metric_means.n_questions_without_content,
        metric_means.mean_complete,
        metric_means.n_questions_complete,
        runs.run_version
    from metric_means
    inner join runs on metric_means.run_id = runs.run_id

)

select * from final
