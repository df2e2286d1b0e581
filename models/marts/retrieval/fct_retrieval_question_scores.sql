-- Per-question retrieval scores (SPEC §5): one row per run x question x granularity x k (var retrieval_ks,
-- 0 = the whole ranking) for every question judged at that granularity in the run's dataset. Questions of the
-- qrels that the run did not retrieve for carry question_in_run = false and zero scores (trec_eval -c);
-- questions the run retrieved for but without qrels at that granularity are not evaluated.

{{
    config(
        materialized='incremental',
        unique_key='run_id',
        incremental_strategy='delete+insert',
        post_hook="{{ retrieval_drop_vanished_runs() }}",
    )
}}

with runs as (

    select
        run_id,
        run_version
    from {{ ref('int_retrieval_runs') }}
    where {{ retrieval_runs_to_process() }}

),

cutoffs as (

    {{ retrieval_ks_values() }}

),

judgments as (

    select
        run_id,
        question_id,
        granularity,
        unit_id,
        relevance
    from {{ ref('int_retrieval_judgments') }}
    where {{ retrieval_runs_to_process() }}

),

ranked_units as (

    select
        run_id,
        question_id,
        granularity,
        unit_rank,
        first_result_position,
        relevance
    from {{ ref('int_retrieval_ranked_units') }}
    where {{ retrieval_runs_to_process() }}

),

judged_questions as (

    select
        run_id,
        question_id,
        granularity,
        count(*) filter (where relevance > 0) as n_relevant
    from judgments
    group by run_id, question_id, granularity

),

-- a question is in the run when it has any result (every result is a chunk-level unit)
run_questions as (

    select distinct
        run_id,
        question_id
    from ranked_units
    where granularity = 'chunk'

),

retrieved_counts as (

    select
        run_id,
        question_id,
        granularity,
        count(*) as n_retrieved
    from ranked_units
    group by run_id, question_id, granularity

),

relevant_hits as (

    select
        run_id,
        question_id,
        granularity,
        unit_rank,
        first_result_position,
        cast(relevance as double) as gain,
        row_number() over (
            partition by run_id, question_id, granularity order by unit_rank
        ) as hit_number
    from ranked_units
    where relevance > 0

),

hits_at_k as (

    select
        relevant_hits.run_id,
        relevant_hits.question_id,
        relevant_hits.granularity,
        cutoffs.k,
        count(*) as n_relevant_retrieved,
        -- precision at each relevant unit: relevant so far / its rank
        sum(cast(relevant_hits.hit_number as double) / relevant_hits.unit_rank) as sum_precision_at_hits,
        min(relevant_hits.unit_rank) as first_hit_rank,
        sum(relevant_hits.gain / log2(relevant_hits.unit_rank + 1.0)) as dcg
    from relevant_hits
    cross join cutoffs
    where cutoffs.k = 0 or relevant_hits.unit_rank <= cutoffs.k
    group by relevant_hits.run_id, relevant_hits.question_id, relevant_hits.granularity, cutoffs.k

),

-- DocRec@k / PageRec@k: relevant docs / pages held by the top-k results (k counts results, as the study does)
result_hits_at_k as (

    select
        relevant_hits.run_id,
        relevant_hits.question_id,
        relevant_hits.granularity,
        cutoffs.k,
        count(*) as n_relevant_in_top_results
    from relevant_hits
    cross join cutoffs
    where relevant_hits.granularity in ('doc', 'page')
        and (cutoffs.k = 0 or relevant_hits.first_result_position <= cutoffs.k)
    group by relevant_hits.run_id, relevant_hits.question_id, relevant_hits.granularity, cutoffs.k

),

-- the ideal ranking: every relevant judged unit by gain descending (trec_eval ndcg_cut)
ideal_gains as (

    select
        run_id,
        question_id,
        granularity,
        cast(relevance as double) as gain,
        row_number() over (
            partition by run_id, question_id, granularity order by relevance desc
        ) as ideal_rank
    from judgments
    where relevance > 0

),

ideal_dcg_at_k as (

    select
        ideal_gains.run_id,
        ideal_gains.question_id,
        ideal_gains.granularity,
        cutoffs.k,
        sum(ideal_gains.gain / log2(ideal_gains.ideal_rank + 1.0)) as ideal_dcg
    from ideal_gains
    cross join cutoffs
    where cutoffs.k = 0 or ideal_gains.ideal_rank <= cutoffs.k
    group by ideal_gains.run_id, ideal_gains.question_id, ideal_gains.granularity, cutoffs.k

),

evaluated as (

    select
        judged_questions.run_id,
        runs.run_version,
        judged_questions.question_id,
        judged_questions.granularity,
        cutoffs.k,
        run_questions.question_id is not null as question_in_run,
        judged_questions.n_relevant,
        coalesce(retrieved_counts.n_retrieved, 0) as n_retrieved
    from judged_questions
    inner join runs on judged_questions.run_id = runs.run_id
    cross join cutoffs
    left join run_questions
        on judged_questions.run_id = run_questions.run_id
        and judged_questions.question_id = run_questions.question_id
    left join retrieved_counts
        on judged_questions.run_id = retrieved_counts.run_id
        and judged_questions.question_id = retrieved_counts.question_id
        and judged_questions.granularity = retrieved_counts.granularity

),

joined as (

    select
        evaluated.*,
        coalesce(hits_at_k.n_relevant_retrieved, 0) as n_relevant_retrieved,
        coalesce(hits_at_k.sum_precision_at_hits, 0.0) as sum_precision_at_hits,
        hits_at_k.first_hit_rank,
        coalesce(hits_at_k.dcg, 0.0) as dcg,
        coalesce(ideal_dcg_at_k.ideal_dcg, 0.0) as ideal_dcg,
        coalesce(result_hits_at_k.n_relevant_in_top_results, 0) as n_relevant_in_top_results
    from evaluated
    left join hits_at_k
        on evaluated.run_id = hits_at_k.run_id
        and evaluated.question_id = hits_at_k.question_id
        and evaluated.granularity = hits_at_k.granularity
        and evaluated.k = hits_at_k.k
    left join ideal_dcg_at_k
        on evaluated.run_id = ideal_dcg_at_k.run_id
        and evaluated.question_id = ideal_dcg_at_k.question_id
        and evaluated.granularity = ideal_dcg_at_k.granularity
        and evaluated.k = ideal_dcg_at_k.k
    left join result_hits_at_k
        on evaluated.run_id = result_hits_at_k.run_id
        and evaluated.question_id = result_hits_at_k.question_id
        and evaluated.granularity = result_hits_at_k.granularity
        and evaluated.k = result_hits_at_k.k

),

final as (

    select
        run_id,
        question_id,
        granularity,
        k,
        question_in_run,
        n_relevant,
        case when k = 0 or n_retrieved < k then n_retrieved else k end as n_retrieved,
        n_relevant_retrieved,
        case when n_relevant > 0 then sum_precision_at_hits / n_relevant else 0.0 end as ap,
        case
            when n_relevant_retrieved > 0 then sum_precision_at_hits / n_relevant_retrieved else 0.0
        end as ap_retrieved,
        case when first_hit_rank is not null then 1.0 / first_hit_rank else 0.0 end as rr,
        case when ideal_dcg > 0 then dcg / ideal_dcg else 0.0 end as ndcg,
        -- P@k divides by k even when fewer were retrieved; P over the whole ranking divides by the number retrieved
        case
            when k > 0 then cast(n_relevant_retrieved as double) / k
            when n_retrieved > 0 then cast(n_relevant_retrieved as double) / n_retrieved
            else 0.0
        end as precision,
        case when n_relevant > 0 then cast(n_relevant_retrieved as double) / n_relevant else 0.0 end as recall,
        case
            when granularity = 'doc' and n_relevant > 0 then cast(n_relevant_in_top_results as double) / n_relevant
            when granularity = 'doc' then 0.0
        end as doc_rec,
        case
            when granularity = 'page' and n_relevant > 0 then cast(n_relevant_in_top_results as double) / n_relevant
            when granularity = 'page' then 0.0
        end as page_rec,
        run_version
    from joined

)

select * from final
