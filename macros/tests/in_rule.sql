{#- Every non-null value of the column is one of a rule's values (python_jobs/core/rules.yml, through its generated
    macro: granularities, slice_dimensions, slice_dimension_rows - the dimensions and their crossings -,
    calibration_methods - their names), or one of
    `also` - instead of an accepted_values list written again.
    The macros are called by name: dbt gives a generic test the macros it sees it call. -#}
{% test in_rule(model, column_name, rule, also=[]) %}
    {%- if rule == 'granularities' -%}
        {%- set values = granularities() -%}
    {%- elif rule == 'slice_dimensions' -%}
        {%- set values = slice_dimensions() -%}
    {%- elif rule == 'slice_dimension_rows' -%}
        {%- set values = slice_dimension_rows() | map(attribute='dimension') | list -%}
    {%- elif rule == 'calibration_methods' -%}
        {%- set values = calibration_methods() | map(attribute='name') | list -%}
    {%- else -%}
        {{ exceptions.raise_compiler_error("in_rule: no rule " ~ rule) }}
    {%- endif -%}
    select {{ column_name }}
    from {{ model }}
    where {{ column_name }} is not null
        and {{ column_name }} not in ({% for v in values + also %}'{{ v }}'{{ ", " if not loop.last }}{% endfor %})
{% endtest %}
