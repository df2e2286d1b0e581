-- Per answer run x question lexical scores (SPEC §5): ROUGE-L F, token F1, exact match and BLEU, each the max
-- over the question's reference answers; numeric match (the rules' relative tolerance) only for questions with a
-- numeric gold, else null. The text scored is answer_scored (cut to the run's max_words). Failed answers carry
-- is_failed and null scores. Every function is defined once in python_jobs/text_metrics.py.

with answers as (

    select * from {{ ref('int_generation_answers') }}

),

references_ as (

    select
        dataset,
        question_id,
        reference_answer,
        gold_number
    from {{ ref('int_generation_references') }}

),

pair_scores as (

    select
        answers.run_id,
        answers.question_id,
        rouge_l_f(answers.answer_scored, references_.reference_answer) as rouge_l,
        token_f1(answers.answer_scored, references_.reference_answer) as token_f1,
        exact_match(answers.answer_scored, references_.reference_answer) as exact_match,
        bleu(answers.answer_scored, references_.reference_answer) as bleu,
        case
            when references_.gold_number is not null
                then numeric_match(answers.answer_scored, references_.reference_answer, {{ numeric_tolerance() }})
        end as numeric_match,
        references_.gold_number is not null as is_numeric_reference
    from answers
    inner join references_ using (dataset, question_id)
    where not answers.is_failed

),

question_scores as (

    select
        run_id,
        question_id,
        count(*) as n_references,
        bool_or(is_numeric_reference) as has_numeric_gold,
        max(rouge_l) as rouge_l,
        max(token_f1) as token_f1,
        max(exact_match) as exact_match,
        max(bleu) as bleu,
        max(numeric_match) as numeric_match
    from pair_scores
    group by run_id, question_id

),

scored_questions as (

    select distinct
        dataset,
        question_id
    from references_

),

final as (

    select
        answers.run_id,
        answers.question_id,
        answers.dataset,
        answers.model,
        answers.eval_mode,
        answers.retrieval_run_id,
        answers.max_words,
        answers.answer_scored,
        answers.is_failed,
        answers.error,
        coalesce(question_scores.n_references, 0) as n_references,
        coalesce(question_scores.has_numeric_gold, false) as has_numeric_gold,
        question_scores.rouge_l,
        question_scores.token_f1,
        question_scores.exact_match,
        question_scores.bleu,
        question_scores.numeric_match
    from answers
    -- questions without a reference answer cannot be scored lexically
    inner join scored_questions using (dataset, question_id)
    left join question_scores using (run_id, question_id)

)

select * from final
