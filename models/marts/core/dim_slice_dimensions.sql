-- The slice dimensions every by-slice mart reports (python_jobs/core/rules.yml, the one place they are declared,
-- through its generated macros), with the label readers show and their order: the dashboard's dimension pickers read
-- them from here. question_column: a column of dim_questions (every by-slice mart has it); false for a crossing of two
-- of them (topic_x_task), which only mart_retrieval_by_slice reports.

with dimensions as (

    {% for row in slice_dimension_rows() %}
        select
            '{{ row.dimension }}' as dimension,
            '{{ row.label }}' as label,
            cast({{ loop.index }} as integer) as display_order,
            {{ 'false' if row.crosses is defined else 'true' }} as question_column
        {{ "union all" if not loop.last }}
    {% endfor %}

)

select * from dimensions
