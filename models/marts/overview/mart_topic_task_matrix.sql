-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- OmniEval's topic x task matrix for any metric of any run (retrieval, generation or judged): the mean of the
-- per-question scores in fct_question_metric_scores over the questions of each (topic, task) cell, at each level of
-- the topic path (1 = the top level below the root). Questions without a topic or a task are in no cell.

with scores as (

    select * from {{ ref('fct_question_metric_scores') }}

),

questions as (

    select
        dataset,
        question_id,
        task,
        topic_l1,
        topic_l2,
        topic_l3,
        topic_l1_en,
        topic_l2_en,
        topic_l3_en
    from {{ ref('dim_questions') }}
    where task is not null

),

question_topics as (

    {% for level in [1, 2, 3] %}
        select
            dataset,
            question_id,
            task,
            {{ level }} as topic_level,
            topic_l{{ level }} as topic,
            topic_l{{ level }}_en as topic_en
        from questions
        where topic_l{{ level }} is not null
                {{ "union all" if not loop.last }}
    {% endfor %}

),

cells as (

    select
        scores.run_id,
        scores.run_kind,
        scores.dataset,
        scores.metric,
        scores.granularity,
        scores.k,
        question_topics.topic_level,
        question_topics.topic,
        question_topics.topic_en,
        question_topics.task,
        avg(scores.value) as mean,
        count(*) as n
    from scores
    inner join question_topics
        on scores.dataset = question_topics.dataset
        and scores.question_id = question_topics.question_id
    group by all

)

select * from cells
