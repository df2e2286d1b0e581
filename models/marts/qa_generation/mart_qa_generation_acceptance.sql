-- Acceptance of generated QA instances (OmniEval reports 87.47 % of its LLM-generated instances accepted), per
-- generation run: overall (topic_level 0, topic 'all', task 'all'), per task, per topic at each level (value = the
-- path down to that level; English path beside it) and per topic x task. Counts: attempts, failed (never landed:
-- malformed reply, unsupported answer, failed call; a failed topic classification only counts in the 'all' rows),
-- generated (landed = kept + dropped), kept / dropped by the LLM inspector; acceptance_ratio = kept / generated.
-- Human inspection: inspected, keep / fix / drop, human_acceptance_ratio = (keep + fix) / inspected.

with attempts as (

    select * from {{ ref('int_qa_generation_attempts') }}

),

-- each attempt in its overall row (level 0) and in the row of each level of its topic
attempt_topics as (

    select
        generation_run_id,
        dataset,
        task,
        status,
        human_verdict,
        0 as topic_level,
        'all' as topic,
        'all' as topic_en
    from attempts
    {% for level in [1, 2, 3] %}
        union all
        select
            generation_run_id,
            dataset,
            task,
            status,
            human_verdict,
            {{ level }} as topic_level,
            topic_l{{ level }} as topic,
            topic_l{{ level }}_en as topic_en
        from attempts
        where topic_l{{ level }} is not null
    {% endfor %}

),

-- and in its task's row and the all-tasks row
attempt_cells as (

    select
        generation_run_id,
        dataset,
        topic_level,
        topic,
        topic_en,
        task,
        status,
        human_verdict
    from attempt_topics
    where task is not null
    union all
    select
        generation_run_id,
        dataset,
        topic_level,
        topic,
        topic_en,
        'all' as task,
        status,
        human_verdict
    from attempt_topics

),

counts as (

    select
        generation_run_id,
        dataset,
        topic_level,
        topic,
        topic_en,
        task,
        count(*) as n_attempts,
        count(*) filter (where status = 'failed') as n_failed,
        count(*) filter (where status in ('ok', 'dropped')) as n_generated,
        count(*) filter (where status = 'ok') as n_kept,
        count(*) filter (where status = 'dropped') as n_dropped,
        count(human_verdict) as n_human_inspected,
        count(*) filter (where human_verdict = 'keep') as n_human_keep,
        count(*) filter (where human_verdict = 'fix') as n_human_fix,
        count(*) filter (where human_verdict = 'drop') as n_human_drop
    from attempt_cells
    group by generation_run_id, dataset, topic_level, topic, topic_en, task

),

final as (

    select
        *,
        case when n_generated > 0 then cast(n_kept as double) / n_generated end as acceptance_ratio,
        case when n_human_inspected > 0 then cast(n_human_keep + n_human_fix as double) / n_human_inspected end
            as human_acceptance_ratio
    from counts

)

select * from final
