{% macro retrieval_run_judged_units(runs) -%}
{#-
    The judged units each run is scored against: its dataset's qrels (int_retrieval_judged_units), of its chunker
    (page-covering chunks; chunks the evidence names count for every chunker), of the questions of its splits
    (question_splits; null = all). `runs` needs run_id, dataset, chunker_id, question_splits. Columns: run_id,
    question_id, granularity, unit_id, relevance (the max over the evidence naming the unit).
-#}
    select
        {{ runs }}.run_id,
        judged.question_id,
        judged.granularity,
        judged.unit_id,
        max(judged.relevance) as relevance
    from {{ runs }}
    inner join {{ ref('int_retrieval_judged_units') }} as judged
        on judged.dataset = {{ runs }}.dataset
        and (judged.chunker_id is null or judged.chunker_id = {{ runs }}.chunker_id)
        and ({{ runs }}.question_splits is null or {{ list_has(runs ~ '.question_splits', 'judged.split') }})
    group by {{ runs }}.run_id, judged.question_id, judged.granularity, judged.unit_id
{%- endmacro %}
