-- Chunk-evidence overlap of the retrieval-gap study (SPEC §5): for each retrieval run x question with gold
-- evidence text x k in (1, 3, 5, 10), the max BLEU and the max ROUGE-L F of the top-k chunks against the question's
-- gold evidence texts concatenated (in evidence order). Chunk text from stg_lake__chunks; chunks ranked as
-- int_retrieval_ranked_units ranks them (one ranking rule). Incremental per run (retrieval_runs_to_process):
-- scoring every chunk against long evidence is the slowest text metric, so a run is scored once per version.

{{
    config(
        materialized='incremental',
        unique_key='run_id',
        incremental_strategy='delete+insert',
        post_hook="{{ retrieval_drop_vanished_runs() }}",
    )
}}

with ranked_chunks as (

    -- the run's chunk ranking as the retrieval metrics see it (one ranking rule, in int_retrieval_ranked_units)
    select run_id, run_version, question_id, unit_id as chunk_id, unit_rank as position
    from {{ ref('int_retrieval_ranked_units') }}
    where {{ retrieval_runs_to_process() }}
        and granularity = 'chunk'
        and unit_rank <= 10

),

gold_evidence as (

    select
        question_id,
        string_agg(evidence_text, chr(10) order by evidence_ordinal) as evidence_text
    from {{ ref('fct_evidence') }}
    where is_relevant and evidence_text is not null and evidence_text <> ''
    group by question_id

),

chunks as (

    select chunk_id, text from {{ ref('stg_lake__chunks') }}

),

chunk_scores as (

    select
        ranked_chunks.run_id,
        ranked_chunks.run_version,
        ranked_chunks.question_id,
        ranked_chunks.position,
        bleu(chunks.text, gold_evidence.evidence_text) as bleu,
        rouge_l_f(chunks.text, gold_evidence.evidence_text) as rouge_l
    from ranked_chunks
    inner join gold_evidence using (question_id)
    inner join chunks using (chunk_id)
    where ranked_chunks.position <= 10

),

cutoffs as (

    select 1 as k union all select 3 union all select 5 union all select 10

),

final as (

    select
        chunk_scores.run_id,
        chunk_scores.question_id,
        cutoffs.k,
        max(chunk_scores.bleu) as max_bleu,
        max(chunk_scores.rouge_l) as max_rouge_l,
        count(*) as n_chunks,
        any_value(chunk_scores.run_version) as run_version
    from chunk_scores
    inner join cutoffs on chunk_scores.position <= cutoffs.k
    group by chunk_scores.run_id, chunk_scores.question_id, cutoffs.k

)

select * from final
