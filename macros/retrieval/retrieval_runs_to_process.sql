{% macro retrieval_runs_to_process(version_column='run_version', column='run_id') %}
{#-
    The filter an incremental retrieval model applies to its inputs: in an incremental build, only the runs whose
    version (int_retrieval_runs.<version_column>: the run's created_at plus fingerprints of the qrels / chunks /
    question attributes it is scored against) is not yet in this model; otherwise every run.

    The run ids are looked up at run time and inlined as literals, so the filter reaches the Parquet scan of the
    lake (a semi-join on a subquery would read every run's rows just to discard them): adding one run to a
    warehouse of twenty reads and recomputes that run only.
-#}
{%- if is_incremental() and execute -%}
    {%- set pending_sql -%}
        select runs.run_id
        from {{ ref('int_retrieval_runs') }} as runs
        left join (select distinct run_id, {{ version_column }} from {{ this }}) as done
            on done.run_id = runs.run_id and done.{{ version_column }} = runs.{{ version_column }}
        where done.run_id is null
        order by runs.run_id
    {%- endset -%}
    {%- set pending = run_query(pending_sql).columns[0].values() -%}
    {%- if pending | length == 0 -%}
        false
    {%- else -%}
        {{ column }} in ({% for run_id in pending %}'{{ run_id | replace("'", "''") }}'{{ ", " if not loop.last }}{% endfor %})
    {%- endif -%}
{%- else -%}
    true
{%- endif -%}
{% endmacro %}


{% macro retrieval_drop_vanished_runs() %}
{#- post-hook of the incremental retrieval models: a run removed from the lake leaves the marts too. -#}
delete from {{ this }} where run_id not in (select run_id from {{ ref('int_retrieval_runs') }})
{% endmacro %}


{% macro retrieval_ks_values() %}
{#- The ranking cut-offs (var retrieval_ks; 0 = the whole ranking) as a one-column relation `k`. -#}
{%- for k in var('retrieval_ks') %}
    select cast({{ k | int }} as integer) as k{{ "\n    union all" if not loop.last }}
{%- endfor %}
{% endmacro %}


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
        avg({{ column }}) filter (where question_in_run) as {{ metric }}__mean,
        avg({{ column }}) as {{ metric }}__mean_complete{{ "," if not loop.last }}
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
