-- Retrieval run x k: mean of the per-question max BLEU / ROUGE-L of the top-k chunks against the gold evidence
-- (fct_retrieval_evidence_overlap), beside the retrieval leaderboard, with the run's retriever and condition. One
-- mean_<metric> column per metric of the registry's evidence_overlap family (seed metrics).

-- depends_on: {{ ref('metrics') }}

with overlap as (

    select * from {{ ref('fct_retrieval_evidence_overlap') }}

),

runs as (

    select
        run_id,
        dataset,
        retriever,
        condition
    from {{ ref('int_retrieval_runs') }}

),

final as (

    select
        overlap.run_id,
        runs.dataset,
        runs.retriever,
        runs.condition,
        overlap.k,
        {%- for column, metric in metric_columns('evidence_overlap') %}
            avg(overlap.{{ column }}) as mean_{{ metric }},
        {%- endfor %}
        count(*) as n_questions
    from overlap
    inner join runs using (run_id)
    group by overlap.run_id, runs.dataset, runs.retriever, runs.condition, overlap.k

)

select * from final
