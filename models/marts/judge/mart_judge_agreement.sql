-- Judge-human agreement per group of fct_judge_agreement_pairs (grain judge_run / judge_model /
-- judge_model_overall, see there): n scored pairs, accuracy (share of pairs where the judge's class equals the
-- human's), the chance agreement p_expected and Cohen's kappa, all from the project's one agreement macro
-- (agreement_stats; mart_qa_generation_inspection_agreement uses it too). Classes: int_judge_metric_classes.
-- n_not_scored counts the pairs left out: the judge's judgment was not_applicable or failed, or the human label was
-- not applicable (their class is null).

with pairs as (

    select * from {{ ref('fct_judge_agreement_pairs') }}

),

agreement as (

    {{ agreement_stats(
        'pairs',
        ['grain', 'judge_run_id', 'label_set', 'metric', 'judge_model', 'rubric', 'answer_model', 'eval_mode'],
        rater_a='judge_class',
        rater_b='human_class',
    ) }}

),

final as (

    select
        grain,
        judge_run_id,
        label_set,
        metric,
        judge_model,
        rubric,
        answer_model,
        eval_mode,
        n,
        n_agree,
        n_incomplete as n_not_scored,
        accuracy,
        p_expected,
        kappa,
        kappa_lower,
        kappa_upper
    from agreement

)

select * from final
