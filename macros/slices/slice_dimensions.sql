{#- The question slice dimensions every by-slice mart reports (SPEC §5 slices), all columns of dim_questions. -#}
{% macro slice_dimensions() %}
    {{ return(['dataset', 'question_type', 'doc_type', 'task', 'topic_l1', 'topic_l2', 'topic_l3', 'company', 'sector']) }}
{% endmacro %}

{#- A select of dim_questions: its key (question_dataset, question_id) and every slice dimension as varchar. -#}
{% macro select_question_slices() %}
    select
        dataset as question_dataset,
        question_id,
        {% for dimension in slice_dimensions() %}cast({{ dimension }} as string) as {{ dimension }}{{ "," if not loop.last }}
        {% endfor %}
    from {{ ref('dim_questions') }}
{% endmacro %}
