-- Every retrieval run with how it is ranked and a version of everything its scores depend on: the incremental
-- retrieval models recompute a run when its version changes (the run re-landed, or its dataset's qrels, its
-- chunker's chunks, or the question / document attributes it is sliced by were re-loaded, or var retrieval_ks
-- changed). A run that asked for some splits of its dataset (question_splits, e.g. a generated test set) is judged
-- against the qrels of those splits only, so its version also follows the questions' loads.

with runs as (

    select * from {{ ref('stg_lake__retrieval_runs') }}

),

evidence_loads as (

    select
        dataset,
        count(*) as n_evidence,
        max(created_at) as evidence_loaded_at
    from {{ ref('stg_lake__evidence') }}
    group by dataset

),

chunk_loads as (

    select
        chunker_id,
        count(*) as n_chunks,
        max(created_at) as chunks_loaded_at
    from {{ ref('stg_lake__chunks') }}
    group by chunker_id

),

question_loads as (

    select
        dataset,
        count(*) as n_questions,
        max(created_at) as questions_loaded_at
    from {{ ref('stg_lake__questions') }}
    group by dataset

),

document_loads as (

    select
        count(*) as n_documents,
        max(created_at) as documents_loaded_at
    from {{ ref('stg_lake__documents') }}

),

versioned as (

    select
        runs.run_id,
        runs.dataset,
        runs.retriever,
        runs.condition,
        runs.k as run_k,
        runs.embedder,
        runs.reranker,
        runs.chunker_id,
        runs.params,
        runs.config_hash,
        runs.config_id,
        runs.source,
        -- imported TREC runs are ranked by trec_eval's rule (score desc, doc id desc), ours by their rank column
        runs.source = 'trec' as ranks_by_score,
        runs.created_at as run_created_at,
        -- null = every question of the dataset
        runs.question_splits,
        concat_ws(
            '|',
            'ks={{ var("retrieval_ks") | join(",") }}',
            cast(runs.created_at as varchar),
            cast(coalesce(evidence_loads.n_evidence, 0) as varchar),
            coalesce(cast(evidence_loads.evidence_loaded_at as varchar), '-'),
            cast(coalesce(chunk_loads.n_chunks, 0) as varchar),
            coalesce(cast(chunk_loads.chunks_loaded_at as varchar), '-'),
            case when runs.question_splits is not null then
                    cast(coalesce(question_loads.n_questions, 0) as varchar) || '@'
                    || coalesce(cast(question_loads.questions_loaded_at as varchar), '-')
            end
        ) as scored_inputs,
        concat_ws(
            '|',
            cast(coalesce(question_loads.n_questions, 0) as varchar),
            coalesce(cast(question_loads.questions_loaded_at as varchar), '-'),
            cast(coalesce(document_loads.n_documents, 0) as varchar),
            coalesce(cast(document_loads.documents_loaded_at as varchar), '-')
        ) as sliced_inputs
    from runs
    left join evidence_loads on runs.dataset = evidence_loads.dataset
    left join chunk_loads on runs.chunker_id = chunk_loads.chunker_id
    left join question_loads on runs.dataset = question_loads.dataset
    cross join document_loads

),

final as (

    select
        run_id,
        dataset,
        retriever,
        condition,
        run_k,
        embedder,
        reranker,
        chunker_id,
        params,
        config_hash,
        config_id,
        source,
        ranks_by_score,
        run_created_at,
        question_splits,
        md5(scored_inputs) as run_version,
        md5(scored_inputs || '|' || sliced_inputs) as slice_version
    from versioned

)

select * from final
