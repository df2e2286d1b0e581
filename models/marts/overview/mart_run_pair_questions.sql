-- Run vs run, question by question: for every pair of runs the warehouse compares (fct_run_pairs, in both orders,
-- as mart_run_comparison writes them) and every metric (x granularity x k) both runs were scored on, each question
-- both scored (fct_run_pair_scores, the pairing mart_run_comparison reads too) with both values, their difference
-- b - a, B's outcome in the metric's direction (win / loss / tie: lower is better for HAL) and whether each run
-- passes the metric's pass threshold in that direction (the registry's pass_threshold and higher_is_better; the two
-- rules live in macros/metrics/metric_direction.sql, which mart_run_comparison's wins and losses read too). A
-- question flips when it passes in exactly one run. The question text is joined on (dataset, question_id): ids are
-- unique within a dataset only. The dashboard's run-vs-run page selects its rows; nothing is decided there.

with paired as (

    select * from {{ ref('fct_run_pair_scores') }}

),

metrics as (

    select
        metric,
        higher_is_better,
        pass_threshold
    from {{ ref('int_metric_registry') }}

),

questions as (

    select
        dataset,
        question_id,
        question
    from {{ ref('dim_questions') }}

),

-- each pair seen from both sides, as mart_run_comparison writes it
both_ways as (

    select
        run_a,
        run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        question_id,
        value_a,
        value_b
    from paired
    union all
    select
        run_b as run_a,
        run_a as run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        question_id,
        value_b as value_a,
        value_a as value_b
    from paired

),

judged as (

    select
        both_ways.*,
        both_ways.value_b - both_ways.value_a as diff,
        metrics.higher_is_better,
        metrics.pass_threshold,
        {{ passes_threshold('both_ways.value_a', 'metrics.pass_threshold', 'metrics.higher_is_better') }} as passes_a,
        {{ passes_threshold('both_ways.value_b', 'metrics.pass_threshold', 'metrics.higher_is_better') }} as passes_b
    from both_ways
    inner join metrics on both_ways.metric = metrics.metric

),

final as (

    select
        judged.run_a,
        judged.run_b,
        judged.run_kind,
        judged.dataset,
        judged.metric,
        judged.granularity,
        judged.k,
        judged.question_id,
        questions.question,
        judged.value_a,
        judged.value_b,
        judged.diff,
        judged.higher_is_better,
        judged.pass_threshold,
        pair_outcome(judged.diff, judged.higher_is_better) as outcome,
        judged.passes_a,
        judged.passes_b,
        judged.passes_a <> judged.passes_b as flipped,
        case
            when judged.passes_b and not judged.passes_a then 'b only'
            when judged.passes_a and not judged.passes_b then 'a only'
        end as passes_in
    from judged
    left join questions
        on judged.dataset = questions.dataset
        and judged.question_id = questions.question_id

)

select * from final
