{% macro retrieval_result_positions(runs, results) %}
{#-
    The ranking rule, in one place: each retrieval result with its position in the run's result list, for
    int_retrieval_ranked_units (which ranks units from it) and fct_retrieval_results_judged (which shows each result
    with its units' ranks). Our runs: by rank. Imported TREC runs (runs.ranks_by_score): trec_eval's rule, score
    descending then doc id descending (the file's rank column, line order, is ignored); a TREC-source run without
    scores falls back to its rank. chunk_unit_id is the result's unit at chunk granularity (the chunk, or the docno
    of a TREC run); page_end defaults to page_start (a one-page result).
    `runs` needs run_id, run_version, ranks_by_score; `results` the stg_lake__retrieval_results columns.
-#}
    select
        {{ results }}.run_id,
        {{ runs }}.run_version,
        {{ results }}.question_id,
        {{ results }}.rank,
        {{ results }}.chunk_id,
        coalesce({{ results }}.chunk_id, {{ results }}.doc_id) as chunk_unit_id,
        {{ results }}.doc_id,
        {{ results }}.page_start,
        coalesce({{ results }}.page_end, {{ results }}.page_start) as page_end,
        {{ results }}.score,
        row_number() over (
            partition by {{ results }}.run_id, {{ results }}.question_id
            order by
                case when {{ runs }}.ranks_by_score then {{ results }}.score end desc nulls last,
                case when {{ runs }}.ranks_by_score and {{ results }}.score is not null
                    then coalesce({{ results }}.chunk_id, {{ results }}.doc_id) end desc,
                {{ results }}.rank
        ) as result_position
    from {{ results }}
    inner join {{ runs }} on {{ runs }}.run_id = {{ results }}.run_id
{% endmacro %}
