-- Every retrieval run with how it is ranked: imported TREC runs by trec_eval's rule (score descending, doc id
-- descending), ours by their rank column (macros/retrieval/retrieval_ranking.sql). What each incremental model
-- recomputes is derived per model from the lake's partitions and the code (macros/retrieval/retrieval_versions.sql).

with runs as (

    select * from {{ ref('stg_lake__retrieval_runs') }}

),

final as (

    select
        run_id,
        dataset,
        retriever,
        condition,
        k as run_k,
        embedder,
        reranker,
        chunker_id,
        params,
        config_hash,
        config_id,
        source,
        source = 'trec' as ranks_by_score,
        created_at as run_created_at,
        -- null = every question of the dataset
        question_splits
    from runs

)

select * from final
