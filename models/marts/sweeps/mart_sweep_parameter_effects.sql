-- Which parameter of a sweep moves a metric, and which of its values is best: for each sweep, parameter, value and
-- metric (x granularity x k for retrieval sweeps), the mean over the sweep's runs with that value of their run
-- means (mart_sweep_runs), i.e. the value's mean over the other parameters' settings, with n_runs, the spread of
-- those run means (std_dev, min_mean, max_mean) and a t-interval of the mean over the runs (level: var
-- sweep_effects_level; null with a single run; cut to the normalised scale [0, 1], clamp_to_scale);
-- is_best_value marks the value whose mean is best in the metric's direction (dim_metrics; ties all marked),
-- delta_vs_best its distance to it, parameter_spread the distance between the parameter's best and worst values
-- (large: the parameter matters for the metric).

with run_means as (

    select * from {{ ref('mart_sweep_runs') }}

),

parameter_values as (

    select * from {{ ref('stg_lake__sweep_runs') }}

),

value_runs as (

    select
        run_means.sweep_id,
        run_means.dataset,
        run_means.kind,
        parameter_values.parameter,
        parameter_values.value,
        parameter_values.value_order,
        run_means.metric,
        run_means.granularity,
        run_means.k,
        run_means.higher_is_better,
        run_means.mean
    from run_means
    inner join parameter_values
        on run_means.sweep_id = parameter_values.sweep_id
        and run_means.run_id = parameter_values.run_id

),

value_means as (

    select
        sweep_id,
        dataset,
        kind,
        parameter,
        value,
        value_order,
        metric,
        granularity,
        k,
        higher_is_better,
        count(*) as n_runs,
        avg(mean) as mean,
        stddev_samp(mean) as std_dev,
        -- the interval's half width is t * sqrt(var / n), null for a single run
        student_t_quantile(cast(0.5 + {{ var('sweep_effects_level') }} / 2 as double), count(*) - 1)
        * sqrt(var_samp(mean) / count(*)) as half_width,
        min(mean) as min_mean,
        max(mean) as max_mean
    from value_runs
    group by sweep_id, dataset, kind, parameter, value, value_order, metric, granularity, k, higher_is_better

),

ranked as (

    select
        value_means.*,
        max(value_means.mean) over parameter_metric as highest_mean,
        min(value_means.mean) over parameter_metric as lowest_mean,
        count(*) over parameter_metric as n_values
    from value_means
    window parameter_metric as (
        partition by
            value_means.sweep_id, value_means.parameter, value_means.metric, value_means.granularity, value_means.k
    )

),

final as (

    select
        sweep_id,
        dataset,
        kind,
        parameter,
        value,
        value_order,
        metric,
        granularity,
        k,
        higher_is_better,
        n_runs,
        mean,
        std_dev,
        -- a mean of [0, 1] means cannot leave [0, 1]; a t-interval over two or three runs easily would (the sweep
        -- page once showed PageRec between -1.27 and 2.75)
        {{ clamp_to_scale('mean - half_width', '0.0', '1.0') }} as ci_low,
        {{ clamp_to_scale('mean + half_width', '0.0', '1.0') }} as ci_high,
        min_mean,
        max_mean,
        n_values,
        {{ comparable_mean('mean') }}
        = {{ comparable_mean('case when higher_is_better then highest_mean else lowest_mean end') }}
            as is_best_value,
        mean - case when higher_is_better then highest_mean else lowest_mean end as delta_vs_best,
        highest_mean - lowest_mean as parameter_spread
    from ranked

)

select * from final
