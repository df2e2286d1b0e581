{% macro retrieval_metric_sums() %}
{#-
    The first of the two steps behind every retrieval mean, for a select grouped by run (and slice values) over
    fct_retrieval_question_scores: for each retrieval metric of the registry (metric_columns('retrieval'); the
    calling model declares `-- depends_on: {{ ref('metrics') }}`) its exact sum and count over the questions in
    the run (`<metric>__sum`, `<metric>__n`) and over every qrels question (`__sum_complete`, `__n_complete`:
    trec_eval -c, questions missing from the run count 0), plus the question counts. Sums and counts add up, so a
    coarser grouping (a run's slices, grouping sets) sums these rows instead of re-reading every question. The
    metrics of var retrieval_exclude_without_content (DocRec, PageRec) leave out of `__sum` / `__n` the questions
    none of whose gold documents has content (the relation's boolean gold_without_content).
-#}
        count(*) filter (where question_in_run) as n_questions,
        count(*) filter (where question_in_run and gold_without_content) as n_questions_without_content,
        count(*) as n_questions_complete,
        {%- for column, metric in metric_columns('retrieval') %}
        {%- set where = 'question_in_run' ~ (' and not gold_without_content'
                                              if metric in var('retrieval_exclude_without_content') else '') %}
        {{ exact_sum(column, where=where) }} as {{ metric }}__sum,
        count({{ column }}) filter (where {{ where }}) as {{ metric }}__n,
        {{ exact_sum(column) }} as {{ metric }}__sum_complete,
        count({{ column }}) as {{ metric }}__n_complete{{ "," if not loop.last }}
        {%- endfor %}
{% endmacro %}


{% macro retrieval_metric_means() %}
{#-
    The second step: for a select grouped by run (and slice) over rows of retrieval_metric_sums(), the question
    counts and each metric's `<metric>__mean` and `<metric>__mean_complete` (sum / count; null where the metric is
    undefined, e.g. doc_rec at page level).
-#}
        cast(sum(n_questions) as bigint) as n_questions,
        cast(sum(n_questions_without_content) as bigint) as n_questions_without_content,
        cast(sum(n_questions_complete) as bigint) as n_questions_complete,
        {%- for column, metric in metric_columns('retrieval') %}
        {{ exact_mean(metric ~ '__sum', metric ~ '__n') }} as {{ metric }}__mean,
        {{ exact_mean(metric ~ '__sum_complete', metric ~ '__n_complete') }} as {{ metric }}__mean_complete
        {{- "," if not loop.last }}
        {%- endfor %}
{% endmacro %}


{% macro retrieval_unpivot_means(relation, keys, where='true') %}
{#-
    The wide `<metric>__mean` columns of retrieval_metric_means() as long rows: keys..., metric, k, means, counts;
    a metric's rows where it is undefined (doc_rec at page level: mean_complete null) are left out, and so are those
    no question of the run counts in (n_questions 0: a mean over nothing is not published) - the one place the
    leaderboard and its slices both leave them out.
-#}
    {%- for column, metric in metric_columns('retrieval') %}
    {%- set excludes = metric in var('retrieval_exclude_without_content') %}
    {%- set n_questions = 'n_questions - n_questions_without_content' if excludes else 'n_questions' %}
    select
        {{ keys | join(',\n        ') }},
        '{{ metric }}' as metric,
        k,
        {{ metric }}__mean as mean,
        {{ n_questions }} as n_questions,
        {% if excludes %}n_questions_without_content{% else %}0{% endif %} as n_questions_without_content,
        {{ metric }}__mean_complete as mean_complete,
        n_questions_complete
    from {{ relation }}
    where ({{ where }})
      and {{ metric }}__mean_complete is not null
      and {{ n_questions }} > 0
    {{ "union all" if not loop.last }}
    {%- endfor %}
{% endmacro %}
