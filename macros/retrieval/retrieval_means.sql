{% macro retrieval_metric_means() %}
{#-
    The aggregates behind every retrieval mean, for a select grouped by run (and slice) over
    fct_retrieval_question_scores: each retrieval metric of the registry (metric_columns('retrieval'); the calling
    model declares `-- depends_on: {{ ref('metrics') }}`), its mean over the questions in the run, and the trec_eval
    -c "complete" mean where qrels questions missing from the run count 0.
-#}
        count(*) filter (where question_in_run) as n_questions,
        count(*) as n_questions_complete,
        {%- for column, metric in metric_columns('retrieval') %}
        {{ exact_avg(column, where='question_in_run') }} as {{ metric }}__mean,
        {{ exact_avg(column) }} as {{ metric }}__mean_complete{{ "," if not loop.last }}
        {%- endfor %}
{% endmacro %}


{% macro retrieval_unpivot_means(relation, keys, where='true') %}
{#-
    The wide `<metric>__mean` columns of retrieval_metric_means() as long rows: keys..., metric, k, means, counts;
    a metric's rows where it is undefined (doc_rec at page level: mean_complete null) are left out.
-#}
    {%- for column, metric in metric_columns('retrieval') %}
    select
        {{ keys | join(',\n        ') }},
        '{{ metric }}' as metric,
        k,
        {{ metric }}__mean as mean,
        n_questions,
        {{ metric }}__mean_complete as mean_complete,
        n_questions_complete
    from {{ relation }}
    where ({{ where }})
      and {{ metric }}__mean_complete is not null
    {{ "union all" if not loop.last }}
    {%- endfor %}
{% endmacro %}
