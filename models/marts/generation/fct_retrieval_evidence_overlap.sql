-- Chunk-evidence overlap of the retrieval-gap study (SPEC §5): for each retrieval run x question with gold
-- evidence text x k of var retrieval_ks (the retrieval metrics' cut-offs), the max BLEU and the max ROUGE-L F of the
-- top-k chunks against the question's gold evidence texts concatenated (in evidence order). Chunk text from
-- stg_lake__chunks; chunks ranked as int_retrieval_ranked_units ranks them (one ranking rule). Incremental per run
-- (retrieval_runs_to_process): scoring every chunk against long evidence is the slowest text metric, so a run is
-- scored once per version, and only as deep as a cut-off reads:
-- k = 0 (the whole ranking) is capped at the deepest positive cut-off of the var (100 by default): a reranker's
-- 200-deep first stage would double the cost for chunks no other cut-off looks at, and every run that returns no
-- more results than that is scored over its whole ranking. Only when the var holds no positive k is k = 0 uncapped.

{%- set positive_ks = var('retrieval_ks') | map('int') | select('gt', 0) | list %}
{%- set depth = positive_ks | max if positive_ks else none %}

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
    select
        run_id,
        run_version,
        question_id,
        unit_id as chunk_id,
        unit_rank as position
    from {{ ref('int_retrieval_ranked_units') }}
    where {{ retrieval_runs_to_process() }}
        and granularity = 'chunk'
        {%- if depth is not none %}
            and unit_rank <= {{ depth }}
        {%- endif %}

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

    select
        chunk_id,
        text
    from {{ ref('stg_lake__chunks') }}

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

),

cutoffs as (

    {{ retrieval_ks_values() }}

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
    -- k = 0: every chunk scored (the ranking up to the cap above)
    inner join cutoffs on cutoffs.k = 0 or chunk_scores.position <= cutoffs.k
    group by chunk_scores.run_id, chunk_scores.question_id, cutoffs.k

)

select * from final
