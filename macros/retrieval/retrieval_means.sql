{% macro retrieval_metric_means() %}
{#-
    The aggregates behind every retrieval mean, for a select grouped by run (and slice) over
    fct_retrieval_question_scores: each retrieval metric of the registry (metric_columns('retrieval'); the calling
    model declares `-- depends_on: {{ ref('metrics') }}`), its mean over the questions in the run, and the trec_eval
    -c "complete" mean where qrels questions missing from the run count 0. The metrics of var
    retrieval_exclude_without_content (DocRec, PageRec) leave out of `mean` the questions none of whose gold
    documents has content (the relation's boolean gold_without_content); `mean_complete` counts them.
-#}
        count(*) filter (where question_in_run) as n_questions,
        count(*) filter (where question_in_run and gold_without_content) as n_questions_without_content,
        count(*) as n_questions_complete,
        {%- for column, metric in metric_columns('retrieval') %}
        {%- set where = 'question_in_run' ~ (' and not gold_without_content'
                                              if metric in var('retrieval_exclude_without_content') else '') %}
        {{ exact_avg(column, where=where) }} as {{ metric }}__mean,
        {{ exact_avg(column) }} as {{ metric }}__mean_complete{{ "," if not loop.last }}
        {%- endfor %}
{% endmacro %}


{% macro retrieval_unpivot_means(relation, keys, where='true') %}
{#-
    The wide `<metric>__mean` columns of retrieval_metric_means() as long rows: keys..., metric, k, means, counts;
    a metric's rows where it is undefined (doc_rec at page level: mean_complete null) are left out.
-#}
    {%- for column, metric in metric_columns('retrieval') %}
    {%- set excludes = metric in var('retrieval_exclude_without_content') %}
    select
        {{ keys | join(',\n        ') }},
        '{{ metric }}' as metric,
        k,
        {{ metric }}__mean as mean,
        {% if excludes %}n_questions - n_questions_without_content{% else %}n_questions{% endif %} as n_questions,
        {% if excludes %}n_questions_without_content{% else %}0{% endif %} as n_questions_without_content,
        {{ metric }}__mean_complete as mean_complete,
        n_questions_complete
    from {{ relation }}
    where ({{ where }})
      and {{ metric }}__mean_complete is not null
    {{ "union all" if not loop.last }}
    {%- endfor %}
{% endmacro %}
