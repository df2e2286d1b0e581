-- Agreement between the LLM inspector and the human annotators on generated QA instances, per generation run and
-- task ('all' = every task): over the instances both inspected, accept = LLM keep / human keep or fix. n, n_agree,
-- accuracy (share of instances where they agree), the chance agreement p_expected and Cohen's kappa come from the
-- project's one agreement macro (agreement_stats, as mart_judge_agreement); the two accept rates beside them.

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
    select
        generation_run_id,
        dataset,
        'all' as task,
        llm_accept,
        human_accept
    from pairs

),

agreement as (

    {{ agreement_stats('task_pairs', ['generation_run_id', 'dataset', 'task'], rater_a='llm_accept',
                       rater_b='human_accept') }}

),

accept_rates as (

    select
        generation_run_id,
        dataset,
        task,
        avg(cast(llm_accept as double)) as p_llm_accept,
        avg(cast(human_accept as double)) as p_human_accept
    from task_pairs
    group by generation_run_id, dataset, task

),

final as (

    select
        agreement.generation_run_id,
        agreement.dataset,
        agreement.task,
        agreement.n,
        agreement.n_agree,
        agreement.accuracy,
        accept_rates.p_llm_accept,
        accept_rates.p_human_accept,
        agreement.p_expected,
        agreement.kappa
    from agreement
    inner join accept_rates
        on agreement.generation_run_id = accept_rates.generation_run_id
        and accept_rates.dataset is not distinct from agreement.dataset
        and agreement.task = accept_rates.task

)

select * from final
