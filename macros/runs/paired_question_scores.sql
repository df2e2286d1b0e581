{% macro paired_question_scores(pairs, scores) -%}
{#-
    Which questions a pair of runs is compared on, written once for the pair's statistics (fct_run_comparisons)
    and its question-by-question list (fct_run_pair_scores), so the list always holds the questions the statistics
    count: the joins of a relation of pairs (run_a, run_b and a metric point) to its runs' per-question scores, as
    scores_a and scores_b - the questions both runs were scored on at the pair's metric point (same_metric_point).
-#}
inner join {{ scores }} as scores_a
        on {{ pairs }}.run_a = scores_a.run_id
        and {{ same_metric_point(pairs, 'scores_a') }}
    inner join {{ scores }} as scores_b
        on {{ pairs }}.run_b = scores_b.run_id
        and scores_a.question_id = scores_b.question_id
        and {{ same_metric_point(pairs, 'scores_b') }}
{%- endmacro %}
