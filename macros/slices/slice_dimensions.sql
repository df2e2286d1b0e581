{#- A select of dim_questions: its key (question_dataset, question_id) and every slice dimension as varchar. -#}
{% macro select_question_slices() %}
    select
        dataset as question_dataset,
        question_id,
        {% for dimension in slice_dimensions() %}cast({{ dimension }} as string) as {{ dimension }}{{ "," if not loop.last }}
        {% endfor %}
    from {{ ref('dim_questions') }}
{% endmacro %}
