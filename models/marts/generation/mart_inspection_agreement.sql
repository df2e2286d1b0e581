-- Agreement between the LLM inspector and the human annotators on generated QA instances, per generation run and
-- task ('all' = every task): over the instances both inspected, accept = LLM keep / human keep or fix. accuracy =
-- share of instances where they agree; Cohen's kappa = (p_o - p_e) / (1 - p_e) with
-- p_e = p_llm * p_human + (1 - p_llm) * (1 - p_human) (null when p_e = 1: both always say the same thing).

with attempts as (

    select * from {{ ref('int_qa_generation_attempts') }}

),

pairs as (

    select
        generation_run_id,
        dataset,
        task,
        case when llm_verdict = 'keep' then 1 else 0 end as llm_accept,
        case when human_verdict in ('keep', 'fix') then 1 else 0 end as human_accept
    from attempts
    where llm_verdict is not null
      and human_verdict is not null

),

task_pairs as (

    select * from pairs
    union all
    select generation_run_id, dataset, 'all' as task, llm_accept, human_accept from pairs

),

counts as (

    select
        generation_run_id,
        dataset,
        task,
        count(*) as n,
        count(*) filter (where llm_accept = human_accept) as n_agree,
        avg(cast(llm_accept as double)) as p_llm_accept,
        avg(cast(human_accept as double)) as p_human_accept
    from task_pairs
    group by generation_run_id, dataset, task

),

final as (

    select
        generation_run_id,
        dataset,
        task,
        n,
        n_agree,
        cast(n_agree as double) / n as accuracy,
        p_llm_accept,
        p_human_accept,
        case
            when p_llm_accept * p_human_accept + (1 - p_llm_accept) * (1 - p_human_accept) < 1
            then (cast(n_agree as double) / n - (p_llm_accept * p_human_accept + (1 - p_llm_accept) * (1 - p_human_accept)))
                / (1 - (p_llm_accept * p_human_accept + (1 - p_llm_accept) * (1 - p_human_accept)))
        end as cohens_kappa
    from counts

)

select * from final
