{#- The slice dimensions, once: each with the label readers show and whether it is a column of dim_questions (the
    question slice dimensions every by-slice mart reports, SPEC §5 slices) or a crossing of two of them
    (topic_x_task: the OmniEval topic x task matrix at the second topic level, which mart_retrieval_by_slice adds).
    In display order: the retrieval-gap study's document and question types first. dim_slice_dimensions publishes
    them; slice_dimensions() and slice_crossings() are views of this list. -#}
{% macro slice_dimension_rows() %}
    {{ return([
        {'dimension': 'doc_type', 'label': 'document type'},
        {'dimension': 'question_type', 'label': 'question type'},
        {'dimension': 'dataset', 'label': 'dataset'},
        {'dimension': 'task', 'label': 'task'},
        {'dimension': 'topic_l1', 'label': 'topic (level 1)'},
        {'dimension': 'topic_l2', 'label': 'topic (level 2)'},
        {'dimension': 'topic_l3', 'label': 'topic (level 3)'},
        {'dimension': 'company', 'label': 'company'},
        {'dimension': 'sector', 'label': 'sector'},
        {'dimension': 'topic_x_task', 'label': 'topic (level 2) x task', 'crosses': ['topic_l2', 'task']},
    ]) }}
{% endmacro %}

{#- The question slice dimensions every by-slice mart reports (SPEC §5 slices), all columns of dim_questions. -#}
{% macro slice_dimensions() %}
    {{ return(slice_dimension_rows() | rejectattr('crosses', 'defined') | map(attribute='dimension') | list) }}
{% endmacro %}

{#- The crossed slice dimensions: each as {dimension, crosses: [two question slice dimensions]}. -#}
{% macro slice_crossings() %}
    {{ return(slice_dimension_rows() | selectattr('crosses', 'defined') | list) }}
{% endmacro %}

{#- In a grouping-sets query: true on the rows grouped by a crossing's dimensions (each <dimension>__grouped = 0). -#}
{% macro crossing_grouped(crossing) -%}
    {{ crossing.crosses | join('__grouped = 0 and ') }}__grouped = 0
{%- endmacro %}

{#- A crossing's value: its dimensions' values joined by ' x ' ('banking/retail x extractive'). -#}
{% macro crossing_value(crossing) -%}
    {{ crossing.crosses | join(" || ' x ' || ") }}
{%- endmacro %}

{#- A select of dim_questions: its key (question_dataset, question_id) and every slice dimension as varchar. -#}
{% macro select_question_slices() %}
    select
        dataset as question_dataset,
        question_id,
        {% for dimension in slice_dimensions() %}cast({{ dimension }} as string) as {{ dimension }}{{ "," if not loop.last }}
        {% endfor %}
    from {{ ref('dim_questions') }}
{% endmacro %}
