-- Judge-human agreement: n scored pairs, accuracy (share of pairs where the judge's class equals the human's) and
-- Cohen's kappa, kappa = (p_o - p_e) / (1 - p_e) with p_o = accuracy and p_e = sum over classes of
-- (judge's share of the class) x (human's share of the class); null when p_e = 1 (both sides use one class).
-- Classes: int_judge_metric_classes. Three grains (column `grain`):
-- - judge_run: one judge run x label set x metric (judge_run_id set);
-- - judge_model: judge model x the metric's rubric x label set x metric x eval_mode x answer model, pooled across judge
--   runs (judge_run_id null); an answer judged by several runs of the same model and rubric counts once, with its
--   latest judgment;
-- - judge_model_overall: the same pooled over every eval_mode and answer model (eval_mode, answer_model null).
-- n_not_scored counts the pairs left out: the judge's judgment was not_applicable or failed, or the human label was
-- not applicable.

with pairs as (

    select * from {{ ref('fct_judge_human_pairs') }}

),

latest_pairs as (

    select *
    from pairs
    qualify row_number() over (
        partition by judge_model, rubric, label_set, answer_run_id, question_id, metric
        order by judged_at desc, judge_run_id desc
    ) = 1

),

keyed as (

    select
        'judge_run' as grain, judge_run_id, label_set, metric, judge_model, rubric, answer_model, eval_mode,
        is_scored, judge_class, human_class
    from pairs
    union all
    select
        'judge_model', cast(null as varchar), label_set, metric, judge_model, rubric, answer_model, eval_mode,
        is_scored, judge_class, human_class
    from latest_pairs
    union all
    select
        'judge_model_overall', cast(null as varchar), label_set, metric, judge_model, rubric,
        cast(null as varchar), cast(null as varchar), is_scored, judge_class, human_class
    from latest_pairs

),

grouped as (

    select
        concat_ws('|', grain, coalesce(judge_run_id, '~'), label_set, metric, judge_model, rubric,
                  coalesce(answer_model, '~'), coalesce(eval_mode, '~')) as group_key,
        *
    from keyed

),

groups as (

    select
        group_key,
        max(grain) as grain,
        max(judge_run_id) as judge_run_id,
        max(label_set) as label_set,
        max(metric) as metric,
        max(judge_model) as judge_model,
        max(rubric) as rubric,
        max(answer_model) as answer_model,
        max(eval_mode) as eval_mode,
        count(case when is_scored then 1 end) as n,
        count(case when is_scored and judge_class = human_class then 1 end) as n_agree,
        count(case when not is_scored then 1 end) as n_not_scored
    from grouped
    group by group_key

),

class_counts as (

    select group_key, judge_class as class, 1 as judge_n, 0 as human_n from grouped where is_scored
    union all
    select group_key, human_class as class, 0 as judge_n, 1 as human_n from grouped where is_scored

),

marginals as (

    select group_key, class, sum(judge_n) as judge_n, sum(human_n) as human_n
    from class_counts
    group by group_key, class

),

chance as (

    select
        marginals.group_key,
        sum(cast(marginals.judge_n as double) * marginals.human_n) / (cast(groups.n as double) * groups.n) as p_expected
    from marginals
    inner join groups using (group_key)
    group by marginals.group_key, groups.n

),

final as (

    select
        groups.grain,
        groups.judge_run_id,
        groups.label_set,
        groups.metric,
        groups.judge_model,
        groups.rubric,
        groups.answer_model,
        groups.eval_mode,
        groups.n,
        groups.n_agree,
        groups.n_not_scored,
        case when groups.n > 0 then cast(groups.n_agree as double) / groups.n end as accuracy,
        chance.p_expected,
        case
            when groups.n > 0 and chance.p_expected < 1
                then (cast(groups.n_agree as double) / groups.n - chance.p_expected) / (1 - chance.p_expected)
        end as kappa
    from groups
    left join chance using (group_key)

)

select * from final
