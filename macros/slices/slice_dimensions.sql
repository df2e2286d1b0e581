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
