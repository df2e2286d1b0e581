-- Chunk-evidence overlap of the retrieval-gap study (SPEC §5): for each retrieval run x question with gold
-- evidence text x k of var retrieval_ks (the retrieval metrics' cut-offs), the max BLEU and the max ROUGE-L F of the
-- top-k chunks against the question's gold evidence texts concatenated (in evidence order). Chunk text from
-- stg_lake__chunks; chunks ranked by the one ranking rule (macros/retrieval/retrieval_ranking.sql). Incremental per
-- run (macros/retrieval/retrieval_versions.sql): scoring every chunk against long evidence is the slowest text
-- metric, so a run is scored once per version, and only as deep as a cut-off reads:
-- k = 0 (the whole ranking) is capped at the deepest positive cut-off of the var (100 by default): a reranker's
-- 200-deep first stage would double the cost for chunks no other cut-off looks at, and every run that returns no
-- more results than that is scored over its whole ranking. Only when the var holds no positive k is k = 0 uncapped.

{%- set positive_ks = var('retrieval_ks') | map('int') | select('gt', 0) | list %}
{%- set depth = positive_ks | max if positive_ks else none %}

{{ config(run_incremental_config()) }}

with runs as (

    {{ retrieval_pending_runs() }}

),

gold_evidence as (

    select
        dataset,
        question_id,
        {{ ordered_string_agg('evidence_text', 'chr(10)', ['evidence_ordinal']) }} as evidence_text
    from {{ ref('fct_evidence') }}
    where is_relevant and evidence_text is not null and evidence_text <> ''
    group by dataset, question_id

),

-- only the questions that have gold evidence text are ranked (TREC-style qrels carry none)
run_results as (

    {{ retrieval_run_results('runs') }}

),

results as (

    select run_results.*
    from run_results
    inner join gold_evidence
        on run_results.dataset = gold_evidence.dataset
        and run_results.question_id = gold_evidence.question_id

),

-- the run's chunk ranking as the retrieval metrics see it (the one ranking rule), as deep as a cut-off reads
ranked_chunks as (

    {%- if depth is not none %}
        select
            run_id,
            question_id,
            unit_id as chunk_id,
            result_position as position
        from ({{ retrieval_top_results('results', depth) }}) as top_results
    {%- else %}
    select
        run_id,
        question_id,
        unit_id as chunk_id,
        row_number() over (
            partition by run_id, question_id
            order by {{ retrieval_rank_order('ranks_by_score', 'score_key', 'unit_id', 'rank') }}
        ) as position
    from results
    {%- endif %}

),

chunks as (

    select
        dataset,
        chunk_id,
        text
    from {{ ref('stg_lake__chunks') }}

),

chunk_scores as (

    select
        ranked_chunks.run_id,
        ranked_chunks.question_id,
        ranked_chunks.position,
        bleu(chunks.text, gold_evidence.evidence_text) as bleu,
        rouge_l_f(chunks.text, gold_evidence.evidence_text) as rouge_l
    from ranked_chunks
    inner join runs on ranked_chunks.run_id = runs.run_id
    inner join gold_evidence
        on runs.dataset = gold_evidence.dataset
        and ranked_chunks.question_id = gold_evidence.question_id
    inner join chunks
        on runs.dataset = chunks.dataset
        and ranked_chunks.chunk_id = chunks.chunk_id

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
        any_value(runs.run_version) as run_version
    from chunk_scores
    inner join runs on chunk_scores.run_id = runs.run_id
    -- k = 0: every chunk scored (the ranking up to the cap above)
    inner join cutoffs on cutoffs.k = 0 or chunk_scores.position <= cutoffs.k
    group by chunk_scores.run_id, chunk_scores.question_id, cutoffs.k

)

select * from final
