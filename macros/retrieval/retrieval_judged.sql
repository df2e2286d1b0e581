{% macro retrieval_run_judged_units(runs, only_relevant=false) -%}
{#-
    The judged units each run is scored against: its dataset's qrels (int_retrieval_judged_units), of its chunker
    (page-covering chunks; chunks the evidence names count for every chunker), of the questions of its splits
    (question_splits; null = all). `runs` needs run_id, dataset, chunker_id, question_splits. Columns: run_id,
    question_id, granularity, unit_id, relevance (the max over the evidence naming the unit).

    `only_relevant`: only the relevant units (macro relevant), filtered before anything else: a unit is relevant when
    one of its rows is (its relevance is their max), so the filter reads the few relevant judgments instead of every
    judgment (a pooled TREC qrels judges 400 documents per question, 1-5 of them relevant).

    A unit has one row in int_retrieval_judged_units per chunker_id (its key), so it can have two rows for a run
    only at chunk granularity, for a run whose chunker has page-covering chunk units in its dataset: a chunk the
    evidence names (chunker_id null) that also covers a gold page. Only those runs' chunk units are grouped (max of
    the two); every other judged row is the run's unit as it stands, not grouped again.
-#}
    with merging_runs as (
        select distinct {{ runs }}.run_id
        from {{ runs }}
        inner join {{ ref('int_retrieval_judged_units') }} as covering
            on {{ runs }}.dataset = covering.dataset
            and {{ runs }}.chunker_id = covering.chunker_id
        where covering.chunker_id is not null
    ),

    judged as {{ not_materialized() }} (
        select
            {{ runs }}.run_id,
            judged.question_id,
            judged.granularity,
            judged.unit_id,
            judged.relevance,
            judged.granularity = 'chunk' and merging_runs.run_id is not null as may_repeat
        from {{ runs }}
        inner join {{ ref('int_retrieval_judged_units') }} as judged
            on {{ runs }}.dataset = judged.dataset
            and (judged.chunker_id is null or {{ runs }}.chunker_id = judged.chunker_id)
            and ({{ runs }}.question_splits is null or {{ list_has(runs ~ '.question_splits', 'judged.split') }})
        left join merging_runs on {{ runs }}.run_id = merging_runs.run_id
        {%- if only_relevant %}
        where {{ relevant('judged.relevance') }}
        {%- endif %}
    )

    select
        run_id,
        question_id,
        granularity,
        unit_id,
        relevance
    from judged
    where not may_repeat
    union all
    select
        run_id,
        question_id,
        granularity,
        unit_id,
        max(relevance) as relevance
    from judged
    where may_repeat
    group by run_id, question_id, granularity, unit_id
{%- endmacro %}
