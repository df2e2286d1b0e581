-- Every run, one row each: retrieval runs, answer runs and judge runs, with what they are (a label people read in
-- every list of runs: `finrag ls`, the dashboard's pickers and tables), when they were made and the runs they were
-- made from (an answer run's retrieval run; a judge run's answer run and that answer run's retrieval run). A judge
-- run's dataset is its answer run's. Read from the lake's run tables, so a run is here as soon as a build has seen
-- it, scored or not.
--
-- The label: a retrieval run's retriever, condition, k, question split and the last path component of its embedder
-- and reranker ("dense · full · k=10 · split test · all-MiniLM-L6-v2"); an answer run's eval mode, model and split,
-- then "over [<its retrieval run's label>]" for a RAG run; a judge run's "judge <model> of [<its answer run's
-- label>]". Parts that are missing are left out (macros/runs/run_labels.sql).

with retrieval_runs as (

    select * from {{ ref('stg_lake__retrieval_runs') }}

),

answer_runs as (

    select * from {{ ref('stg_lake__generation_runs') }}

),

judge_runs as (

    select * from {{ ref('stg_lake__judge_runs') }}

),

retrieval_labelled as (

    select
        run_id,
        dataset,
        retriever,
        condition,
        created_at,
        {{ oracle_bound_condition('condition') }} as is_oracle_bound,
        concat_ws(
            ' · ',
            nullif(retriever, ''),
            nullif(condition, ''),
            case when k is not null then 'k=' || cast(k as string) end,
            {{ splits_label('question_splits') }},
            {{ last_path_component('embedder') }},
            {{ last_path_component('reranker') }}
        ) as label
    from retrieval_runs

),

answer_labelled as (

    select
        answer_runs.run_id,
        answer_runs.dataset,
        answer_runs.model,
        answer_runs.eval_mode,
        answer_runs.created_at,
        nullif(answer_runs.retrieval_run_id, '') as retrieval_run_id,
        coalesce(retrieval_labelled.is_oracle_bound, false)
        or {{ oracle_bound_eval_mode('answer_runs.eval_mode') }} as is_oracle_bound,
        concat_ws(
            ' · ',
            nullif(answer_runs.eval_mode, ''),
            {{ last_path_component('answer_runs.model') }},
            {{ splits_label('answer_runs.question_splits') }}
        ) || case
            when nullif(answer_runs.retrieval_run_id, '') is not null
                then ' over [' || coalesce(retrieval_labelled.label, answer_runs.retrieval_run_id) || ']'
            else ''
        end as label
    from answer_runs
    left join retrieval_labelled on answer_runs.retrieval_run_id = retrieval_labelled.run_id

),

judge_labelled as (

    select
        judge_runs.judge_run_id as run_id,
        answer_labelled.dataset,
        judge_runs.judge_model as model,
        judge_runs.created_at,
        judge_runs.answer_run_id,
        answer_labelled.retrieval_run_id,
        coalesce(answer_labelled.is_oracle_bound, false) as is_oracle_bound,
        'judge ' || coalesce({{ last_path_component('judge_runs.judge_model') }}, '')
        || ' of [' || coalesce(answer_labelled.label, judge_runs.answer_run_id) || ']' as label
    from judge_runs
    left join answer_labelled on judge_runs.answer_run_id = answer_labelled.run_id

),

final as (

    select
        run_id,
        'retrieval' as kind,
        dataset,
        label,
        created_at,
        cast(null as string) as answer_run_id,
        cast(null as string) as retrieval_run_id,
        retriever,
        condition,
        cast(null as string) as model,
        cast(null as string) as eval_mode,
        is_oracle_bound
    from retrieval_labelled

    union all

    select
        run_id,
        'answer' as kind,
        dataset,
        label,
        created_at,
        cast(null as string) as answer_run_id,
        retrieval_run_id,
        cast(null as string) as retriever,
        cast(null as string) as condition,
        model,
        eval_mode,
        is_oracle_bound
    from answer_labelled

    union all

    select
        run_id,
        'judge' as kind,
        dataset,
        label,
        created_at,
        answer_run_id,
        retrieval_run_id,
        cast(null as string) as retriever,
        cast(null as string) as condition,
        model,
        cast(null as string) as eval_mode,
        is_oracle_bound
    from judge_labelled

)

select * from final
