/*
  The reranker chosen per dataset, as the FinanceRAG paper's Table 2: over every retrieval sweep that varies
  `reranker`, on nDCG@10 at document level (the FinanceRAG task's metric; change the filter for another), the
  sweep's best reranker (every best, if tied) and the rerankers Tukey's HSD cannot tell from it. One line per
  dataset and sweep. Read by
    finrag sql "$(cat docs/reranker_choice.sql)" --format table
  over the published marts (run `finrag build` first; mart_sweep_run_results holds the sweeps' runs).
*/
with reranker_runs as (

    select
        dataset,
        sweep_id,
        run_id,
        setting,
        mean,
        is_best_in_sweep,
        tied_with_best,
        -- the run's reranker: its `reranker=<value>` part of the setting (parameters joined by ', ')
        regexp_extract(setting, '(^|, )reranker=([^,]*)', 2) as reranker
    from mart_sweep_run_results
    where
        metric = 'ndcg' and k = 10 and granularity = 'doc'
        and regexp_matches(setting, '(^|, )reranker=')

)

select
    dataset,
    sweep_id,
    count(*) as n_runs,
    string_agg(distinct reranker, ' | ' order by reranker) filter (where is_best_in_sweep) as chosen_reranker,
    round(max(mean), 4) as best_ndcg_at_10,
    coalesce(
        string_agg(distinct reranker, ' | ' order by reranker) filter (where tied_with_best and not is_best_in_sweep),
        ''
    ) as tied_with_it
from reranker_runs
group by dataset, sweep_id
order by dataset, sweep_id
