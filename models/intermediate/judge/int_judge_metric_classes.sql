-- The agreement classes of every judged metric, with the raw-score interval each class covers
-- (lower_bound <= raw < upper_bound). One place maps a raw score to a class, for judges and humans alike:
-- - correctness (answer-file guideline, -1..2): incorrect [-1.5, -0.5), abstention [-0.5, 0.5), correct [0.5, 2.5):
--   the human labels' -1 / 0 / 2 fall in the middle of their class, and a continuous judge score goes to the class of
--   the nearest scale point, 1 ("correct with irrelevant content") and 2 both counting as correct;
-- - every other metric: one class per integer point v of its scale, covering [v - 0.5, v + 0.5) (a continuous score
--   such as faithfulness 0.6 rounds to the nearest point, halves up).
-- Not-applicable sentinels lie off the scale, so they fall in no class. The registry is int_metric_registry's: a
-- metric declared with an external or production judge run (metric_declarations) has its classes too.

with metrics as (

    select
        metric,
        scale_min,
        scale_max
    from {{ ref('int_metric_registry') }}
    where family = 'judged'

),

scale_points as (

    -- the series unnested in a subquery: Spark's explode may not stand inside an expression such as cast
    select
        metric,
        cast(scale_point as double) as point
    from (
        select
            metric,
            {{ unnest_series('cast(scale_min as bigint)', 'cast(scale_max as bigint)') }} as scale_point
        from metrics
        where metric <> 'correctness'
    ) as series

),

point_classes as (

    select
        metric,
        cast(cast(point as integer) as string) as class,
        cast(point as integer) as class_order,
        point - 0.5 as lower_bound,
        point + 0.5 as upper_bound
    from scale_points

),

correctness_classes as (

    select
        class_values.metric,
        class_values.class,
        class_values.class_order,
        class_values.lower_bound,
        class_values.upper_bound
    from (
        values
        ('correctness', 'incorrect', 0, -1.5, -0.5),
        ('correctness', 'abstention', 1, -0.5, 0.5),
        ('correctness', 'correct', 2, 0.5, 2.5)
    ) as class_values (metric, class, class_order, lower_bound, upper_bound)

),

final as (

    select
        metric,
        class,
        class_order,
        cast(lower_bound as double) as lower_bound,
        cast(upper_bound as double) as upper_bound
    from point_classes
    union all
    select
        metric,
        class,
        class_order,
        cast(lower_bound as double) as lower_bound,
        cast(upper_bound as double) as upper_bound
    from correctness_classes

)

select * from final
