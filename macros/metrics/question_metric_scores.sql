{% macro question_metric_scores_retrieval_versions() %}
{#-
    A select of each retrieval run's version in fct_question_metric_scores (run_id, run_version): the version of
    its per-question scores and this model's code (code_fingerprint: what its SQL is made of).
-#}
    select distinct
        run_id,
        md5({{ code_fingerprint() }} || '|' || run_version) as run_version
    from {{ ref('fct_retrieval_question_scores') }}
{% endmacro %}


{% macro question_metric_scores_delete_stale() %}
{#-
    pre-hook of the incremental fct_question_metric_scores: deletes the retrieval rows whose run is gone or has
    another version now, and every generation and judge row (the model recomputes those in every build). A table
    built before run_version existed loses every row (the column is added on insert).
-#}
{%- if is_incremental() -%}
    {%- set columns = adapter.get_columns_in_relation(this) | map(attribute='name') | list -%}
    delete from {{ this }}
    where run_kind <> 'retrieval'
    {%- if 'run_version' in columns %}
        or not exists (
            select 1 from ({{ question_metric_scores_retrieval_versions() }}) as current_versions
            where current_versions.run_id = {{ this }}.run_id
                and current_versions.run_version = {{ this }}.run_version
        )
    {%- else %}
        or true
    {%- endif %}
{%- endif -%}
{% endmacro %}
