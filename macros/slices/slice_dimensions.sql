{#- In slice_unpivot's grouping sets: true on the rows grouped by a crossing's dimensions (each <dimension>__grouped = 0). -#}
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

{% macro slice_unpivot(relation, keys, measures, crossings=[]) %}
{#-
    The by-slice marts' one shape: the rows of `relation` (holding every slice dimension as a column) grouped by
    `keys` and each slice dimension in turn (and each of `crossings`' pairs), as long rows: keys..., dimension,
    dimension_value (a string), the `measures`; a slice whose value is null is left out. One grouping-sets query
    reads the rows once for every dimension, instead of one select per dimension glued with union all. The rows also
    hold each dimension's column and <dimension>__grouped: select what the mart shows.
-#}
{%- set dimensions = slice_dimensions() %}
    select *
    from (
        select
            *,
            case
                {%- for crossing in crossings %}
                when {{ crossing_grouped(crossing) }} then '{{ crossing.dimension }}'
                {%- endfor %}
                {%- for dimension in dimensions %}
                when {{ dimension }}__grouped = 0 then '{{ dimension }}'
                {%- endfor %}
            end as dimension,
            case
                {%- for crossing in crossings %}
                when {{ crossing_grouped(crossing) }} then {{ crossing_value(crossing) }}
                {%- endfor %}
                {%- for dimension in dimensions %}
                when {{ dimension }}__grouped = 0 then cast({{ dimension }} as string)
                {%- endfor %}
            end as dimension_value
        from (
            select
                {{ keys | join(', ') }},
                {%- for dimension in dimensions %}
                grouping({{ dimension }}) as {{ dimension }}__grouped,
                {{ dimension }},
                {%- endfor %}
                {{ measures }}
            from {{ relation }}
            -- sqlfluff's duckdb dialect does not parse grouping sets yet
            group by grouping sets (  -- noqa: PRS
                {%- for dimension in dimensions %}
                ({{ keys | join(', ') }}, {{ dimension }}){{ "," if not loop.last or crossings }}
                {%- endfor %}
                {%- for crossing in crossings %}
                ({{ keys | join(', ') }}, {{ crossing.crosses | join(', ') }}){{ "," if not loop.last }}
                {%- endfor %}
            )
        ) as slice_groups
    ) as slices
    where dimension_value is not null
{% endmacro %}
