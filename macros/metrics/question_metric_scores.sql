{#-
    The incremental models over another run-versioned model's per-run rows (fct_question_metric_scores over
    fct_retrieval_question_scores, fct_run_metric_stats over fct_question_metric_scores): a retrieval run is
    recomputed when its version upstream or this model's code changes; the generation and judge rows are small and
    recomputed in every build. Deciding reads the record of run versions (finrag_run_versions), never the models.
-#}

{% macro upstream_run_versions(upstream) %}
{#-
    A select of each retrieval run's version in the model being built (run_id, run_version): the run's version in
    `upstream` (its record in an incremental build; its rows in a whole one) with this model's code
    (code_fingerprint: what its SQL is made of).
-#}
    {%- set record = run_versions_record() if is_incremental() else none %}
    select
        upstream.run_id,
        md5({{ code_fingerprint() }} || '|' || upstream.run_version) as run_version
    {%- if record is not none %}
    from {{ record }} as upstream
    where upstream.model_name = '{{ upstream.identifier }}'
    {%- else %}
    from (select distinct run_id, run_version from {{ upstream }} where run_version is not null) as upstream
    {%- endif %}
{% endmacro %}


{% macro per_run_delete_stale(versions_sql) %}
{#-
    pre-hook of an incremental model over per-run rows: deletes every generation and judge row (recomputed in every
    build) and the rows of the retrieval runs whose version the record (finrag_run_versions) says changed, by run
    id, so only their row groups are read. Without a record of this model, or in a table built before run_version
    existed, every row (the model then recomputes every run).
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
            ~ "and not exists (select 1 from (" ~ versions_sql ~ ") as current_versions "
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


{% macro per_run_pending(versions) %}
{#- The condition on a CTE of retrieval run versions (run_id, run_version), named `versions`, of the runs to compute:
    those whose version the record does not hold for this model (every run in a whole build, without a record, or
    when the model's table has no run_version column yet: built before the model was run-versioned). -#}
    {%- set versioned = is_incremental() and 'run_version' in (adapter.get_columns_in_relation(this)
        | map(attribute='name') | list) %}
    {%- set record = run_versions_record() if versioned else none %}
    {%- if record is not none -%}
    not exists (
        select 1 from {{ record }} as done
        where done.model_name = '{{ this.identifier }}'
            and done.run_id = {{ versions }}.run_id
            and done.run_version = {{ versions }}.run_version
    )
    {%- else -%}
    true
    {%- endif %}
{% endmacro %}
