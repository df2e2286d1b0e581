-- Every answer of every answer run (our own runs, imported answer files, FinanceBench's labelled runs) with the
-- text that is scored: cut to its first N words when the run asks for it (generation_runs.max_words; answer-file runs
-- 300).
-- The cut is the python function first_words (python_jobs/text_metrics.py), registered by the dbt-duckdb plugin (on
-- Spark by python_jobs/warehouse/spark_session.py, as a temporary function, which a persistent view may not call: a
-- table there, dbt_project.yml).

with answers as (

    select * from {{ ref('stg_lake__answers') }}

),

runs as (

    select
        run_id,
        dataset,
        retrieval_run_id,
        model,
        eval_mode,
        prompt_template,
        max_words
    from {{ ref('stg_lake__generation_runs') }}

),

final as (

    select
        answers.run_id,
        answers.question_id,
        runs.dataset,
        runs.retrieval_run_id,
        runs.model,
        runs.eval_mode,
        runs.prompt_template,
        runs.max_words,
        answers.answer,
        first_words(answers.answer, runs.max_words) as answer_scored,
        answers.error,
        answers.error is not null or answers.answer is null as is_failed,
        answers.context_chunk_ids,
        answers.prompt_tokens,
        answers.completion_tokens,
        answers.latency_ms,
        answers.cost_usd
    from answers
    inner join runs using (run_id)

)

select * from final
