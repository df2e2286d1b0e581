{% macro question_metric_scores_retrieval_versions() %}
{#-
    A select of each retrieval run's version in fct_question_metric_scores (run_id, run_version): the version of
    its per-question scores (the record of fct_retrieval_question_scores, finrag_run_versions, in an incremental
    build; its rows in a whole one) and this model's code (code_fingerprint: what its SQL is made of).
-#}
    {%- set upstream = ref('fct_retrieval_question_scores') %}
    {%- set record = run_versions_record() if is_incremental() else none %}
    select
        upstream.run_id,
        md5({{ code_fingerprint() }} || '|' || upstream.run_version) as run_version
    {%- if record is not none %}
    from {{ record }} as upstream
    where upstream.model_name = '{{ upstream.identifier }}'
    {%- else %}
    from (select distinct run_id, run_version from {{ upstream }}) as upstream
    {%- endif %}
{% endmacro %}


{% macro question_metric_scores_delete_stale() %}
{#-
    pre-hook of the incremental fct_question_metric_scores: deletes every generation and judge row (the model
    recomputes those in every build) and the retrieval rows of the runs whose version the record
    (finrag_run_versions) says changed, by run id, so only their row groups are read. Without a record of this
    model, or in a table built before run_version existed, every row (the model then recomputes every run).
-#}
{%- if is_incremental() -%}
    {%- set columns = adapter.get_columns_in_relation(this) | map(attribute='name') | list -%}
    {%- set record = run_versions_record() -%}
    {%- set recorded = record is not none and run_query("select count(*) from " ~ record ~ " where model_name = '"
        ~ this.identifier ~ "'").columns[0].values()[0] > 0 -%}
    {%- if not recorded or 'run_version' not in columns -%}
    delete from {{ this }}
    {%- else -%}
        {%- set stale = run_query(
            "select done.run_id from " ~ record ~ " as done where done.model_name = '" ~ this.identifier ~ "' "
            ~ "and not exists (select 1 from (" ~ question_metric_scores_retrieval_versions() ~ ") as current_versions "
            ~ "where current_versions.run_id = done.run_id and current_versions.run_version = done.run_version)"
        ).columns[0].values() -%}
    delete from {{ this }}
    where run_kind <> 'retrieval'
        {%- if stale | length > 0 %}
        or run_id in ({% for r in stale %}'{{ r | replace("'", "''") }}'{{ ", " if not loop.last }}{% endfor %})
        {%- endif %}
    {%- endif -%}
{%- endif -%}
{% endmacro %}


{% macro question_metric_scores_pending_runs() %}
{#- The condition on retrieval_versions of the runs to compute: those whose version the record does not hold (every
    run in a whole build, or without a record). -#}
    {%- set record = run_versions_record() if is_incremental() else none %}
    {%- if record is not none -%}
    not exists (
        select 1 from {{ record }} as done
        where done.model_name = '{{ this.identifier }}'
            and done.run_id = retrieval_versions.run_id
            and done.run_version = retrieval_versions.run_version
    )
    {%- else -%}
    true
    {%- endif %}
{% endmacro %}
