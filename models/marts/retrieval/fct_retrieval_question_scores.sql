-- Per-question retrieval scores (SPEC §5): one row per run x question x granularity x k (var retrieval_ks,
-- 0 = the whole ranking) for every question judged at that granularity in the run's dataset. Questions of the
-- qrels that the run did not retrieve for carry question_in_run = false and zero scores (trec_eval -c);
-- questions the run retrieved for but without qrels at that granularity are not evaluated. From the run's
-- relevant hits (int_retrieval_hits), the units it retrieved (int_retrieval_depths) and its dataset's qrels
-- (int_retrieval_judged_units); every k is computed in one pass over the hits.

{{ config(run_incremental_config(tags=['retrieval_metrics'])) }}

with runs as (

    {{ retrieval_pending_runs() }}

),

cutoffs as (

    {{ retrieval_ks_values() }}

),

-- the run's judged units (any judgment: a question judged only non-relevant is scored 0, as trec_eval does)
judged_units as (

    {{ retrieval_run_judged_units('runs') }}

),

judged_questions as (

    select
        run_id,
        question_id,
        granularity,
        count(*) filter (where {{ relevant('relevance') }}) as n_relevant
    from judged_units
    group by run_id, question_id, granularity

),

-- the run's relevant units, read apart from the judged questions' count: only the relevant judgments
relevant_units as (

    {{ retrieval_run_judged_units('runs', only_relevant=true) }}

),

-- the ideal ranking: every relevant judged unit by gain descending (trec_eval ndcg_cut), with its running DCG (a
-- running sum in rank order gives the same bits whatever the number of threads, as exact sums do)
ideal_ranks as (

    select
        run_id,
        question_id,
        granularity,
        cast(relevance as double) as gain,
        row_number() over (partition by run_id, question_id, granularity order by relevance desc) as ideal_rank
    from relevant_units

),

ideal_dcgs as (

    select
        run_id,
        question_id,
        granularity,
        ideal_rank,
        sum(gain / log2(ideal_rank + 1.0)) over (
            partition by run_id, question_id, granularity order by ideal_rank
            rows between unbounded preceding and current row
        ) as ideal_dcg
    from ideal_ranks

),

hits as (

    select
        hits.run_id,
        hits.question_id,
        hits.granularity,
        hits.unit_rank,
        hits.first_result_position,
        cast(hits.relevance as double) as gain,
        -- the hit's place among the relevant units retrieved: precision at it = hit_number / unit_rank
        row_number() over (
            partition by hits.run_id, hits.question_id, hits.granularity order by hits.unit_rank
        ) as hit_number
    from {{ ref('int_retrieval_hits') }} as hits
    inner join runs on hits.run_id = runs.run_id

),

-- running sums over the hits in rank order: at a cut-off k, AP's numerator and the DCG are those of the last hit
-- ranked within k
running_hits as (

    select
        run_id,
        question_id,
        granularity,
        unit_rank,
        first_result_position,
        sum(cast(hit_number as double) / unit_rank) over hit_order as running_precision,
        sum(gain / log2(unit_rank + 1.0)) over hit_order as running_dcg
    from hits
    window hit_order as (
        partition by run_id, question_id, granularity order by unit_rank
        rows between unbounded preceding and current row
    )

),

{% set within_k = 'cutoffs.k = 0 or running_hits.unit_rank <= cutoffs.k' -%}
{% set in_top_results = 'cutoffs.k = 0 or running_hits.first_result_position <= cutoffs.k' -%}
hits_at_k as (

    select
        running_hits.run_id,
        running_hits.question_id,
        running_hits.granularity,
        cutoffs.k,
        count(*) filter (where {{ within_k }}) as n_relevant_retrieved,
        max(running_hits.running_precision) filter (where {{ within_k }}) as sum_precision_at_hits,
        min(running_hits.unit_rank) filter (where {{ within_k }}) as first_hit_rank,
        max(running_hits.running_dcg) filter (where {{ within_k }}) as dcg,
        -- DocRec@k / PageRec@k: relevant docs / pages held by the top-k results (k counts results, as the study;
        -- one result covers several pages, so a page can be in the top-k results while ranked below k)
        count(*) filter (where {{ in_top_results }}) as n_relevant_in_top_results
    from running_hits
    inner join cutoffs on {{ within_k }} or {{ in_top_results }}
    group by running_hits.run_id, running_hits.question_id, running_hits.granularity, cutoffs.k

),

depths as (

    select
        depths.run_id,
        depths.question_id,
        depths.granularity,
        depths.n_retrieved
    from {{ ref('int_retrieval_depths') }} as depths
    inner join runs on depths.run_id = runs.run_id

),

-- a question is in the run when it has any result (every result is a chunk-level unit)
run_questions as (

    select
        run_id,
        question_id
    from depths
    where granularity = 'chunk'

),

evaluated as (

    select
        judged_questions.run_id,
        judged_questions.question_id,
        judged_questions.granularity,
        cutoffs.k,
        run_questions.question_id is not null as question_in_run,
        judged_questions.n_relevant,
        coalesce(depths.n_retrieved, 0) as n_retrieved,
        coalesce(hits_at_k.n_relevant_retrieved, 0) as n_relevant_retrieved,
        coalesce(hits_at_k.sum_precision_at_hits, 0.0) as sum_precision_at_hits,
        hits_at_k.first_hit_rank,
        coalesce(hits_at_k.dcg, 0.0) as dcg,
        coalesce(ideal_dcg_at_k.ideal_dcg, 0.0) as ideal_dcg,
        coalesce(hits_at_k.n_relevant_in_top_results, 0) as n_relevant_in_top_results
    from judged_questions
    cross join cutoffs
    left join run_questions
        on judged_questions.run_id = run_questions.run_id
        and judged_questions.question_id = run_questions.question_id
    left join depths
        on judged_questions.run_id = depths.run_id
        and judged_questions.question_id = depths.question_id
        and judged_questions.granularity = depths.granularity
    left join hits_at_k
        on judged_questions.run_id = hits_at_k.run_id
        and judged_questions.question_id = hits_at_k.question_id
        and judged_questions.granularity = hits_at_k.granularity
        and cutoffs.k = hits_at_k.k
    -- the ideal DCG at k: the running ideal DCG at rank k, or at the last relevant unit when there are fewer
    left join ideal_dcgs as ideal_dcg_at_k
        on judged_questions.run_id = ideal_dcg_at_k.run_id
        and judged_questions.question_id = ideal_dcg_at_k.question_id
        and judged_questions.granularity = ideal_dcg_at_k.granularity
        and case
            when cutoffs.k = 0 or judged_questions.n_relevant < cutoffs.k then judged_questions.n_relevant
            else cutoffs.k
        end = ideal_dcg_at_k.ideal_rank

),

final as (

    select
        evaluated.run_id,
        evaluated.question_id,
        evaluated.granularity,
        evaluated.k,
        evaluated.question_in_run,
        evaluated.n_relevant,
        case when evaluated.k = 0 or evaluated.n_retrieved < evaluated.k then evaluated.n_retrieved
            else evaluated.k
        end as n_retrieved,
        evaluated.n_relevant_retrieved,
        case when evaluated.n_relevant > 0 then evaluated.sum_precision_at_hits / evaluated.n_relevant
            else 0.0
        end as ap,
        case when evaluated.n_relevant_retrieved > 0
                then evaluated.sum_precision_at_hits / evaluated.n_relevant_retrieved
            else 0.0
        end as ap_retrieved,
        case when evaluated.first_hit_rank is not null then 1.0 / evaluated.first_hit_rank else 0.0 end as rr,
        cast(evaluated.first_hit_rank as integer) as first_relevant_rank,
        case when evaluated.ideal_dcg > 0 then evaluated.dcg / evaluated.ideal_dcg else 0.0 end as ndcg,
        -- P@k divides by k even when fewer were retrieved; P over the whole ranking divides by the number retrieved
        case
            when evaluated.k > 0 then cast(evaluated.n_relevant_retrieved as double) / evaluated.k
            when evaluated.n_retrieved > 0
                then cast(evaluated.n_relevant_retrieved as double) / evaluated.n_retrieved
            else 0.0
        end as precision,
        case when evaluated.n_relevant > 0
                then cast(evaluated.n_relevant_retrieved as double) / evaluated.n_relevant
            else 0.0
        end as recall,
        -- DocRec and PageRec are defined at one granularity each (the registry's granularities column: doc, page)
        case
            when evaluated.granularity = 'doc' and evaluated.n_relevant > 0
                then cast(evaluated.n_relevant_in_top_results as double) / evaluated.n_relevant
            when evaluated.granularity = 'doc' then 0.0
        end as doc_rec,
        case
            when evaluated.granularity = 'page' and evaluated.n_relevant > 0
                then cast(evaluated.n_relevant_in_top_results as double) / evaluated.n_relevant
            when evaluated.granularity = 'page' then 0.0
        end as page_rec,
        runs.run_version
    from evaluated
    inner join runs on evaluated.run_id = runs.run_id

)

select * from final
