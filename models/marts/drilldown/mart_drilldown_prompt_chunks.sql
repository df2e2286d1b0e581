-- The chunks each RAG answer put into its prompt, in prompt order: one row per answer run x question x position of
-- answers.context_chunk_ids (1-based), with the retrieval run the answer run answered over. Closed-book runs and
-- imported answers without context chunks have no rows. The drill-down marks these chunks "in prompt".

with answers as (

    select
        run_id,
        question_id,
        dataset,
        retrieval_run_id,
        context_chunk_ids
    from {{ ref('int_generation_answers') }}
    where retrieval_run_id is not null and context_chunk_ids is not null

),

positions as (

    select
        run_id as answer_run_id,
        question_id,
        dataset,
        retrieval_run_id,
        {{ unnest_with_ordinal('context_chunk_ids', 'chunk_id', 'prompt_position') }}
    from answers

),

final as (

    select
        answer_run_id,
        question_id,
        dataset,
        retrieval_run_id,
        chunk_id,
        cast(prompt_position as integer) as prompt_position
    from positions

)

select * from final
