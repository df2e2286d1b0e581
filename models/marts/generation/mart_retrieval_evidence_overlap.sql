-- Retrieval run x k: mean of the per-question max BLEU / ROUGE-L of the top-k chunks against the gold evidence
-- (fct_retrieval_evidence_overlap), beside the retrieval leaderboard, with the run's retriever and condition.

with overlap as (

    select * from {{ ref('fct_retrieval_evidence_overlap') }}

),

runs as (

    select run_id, dataset, retriever, condition from {{ ref('int_retrieval_runs') }}

),

final as (

    select
        overlap.run_id,
        runs.dataset,
        runs.retriever,
        runs.condition,
        overlap.k,
        avg(overlap.max_bleu) as mean_max_bleu,
        avg(overlap.max_rouge_l) as mean_max_rouge_l,
        count(*) as n_questions
    from overlap
    inner join runs using (run_id)
    group by overlap.run_id, runs.dataset, runs.retriever, runs.condition, overlap.k

)

select * from final
