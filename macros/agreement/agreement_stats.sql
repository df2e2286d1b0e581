{% macro agreement_stats(pairs, keys, rater_a, rater_b) %}
{#-
    Agreement of two raters, per group: a select (for a CTE) with the group's keys and
      n             pairs where both raters gave a class (the pairs compared),
      n_agree       compared pairs where the two classes are equal,
      n_incomplete  pairs missing a class on either side (left out of every statistic, only counted),
      accuracy      observed agreement p_o = n_agree / n (null when n = 0),
      p_expected    chance agreement p_e = sum over classes of (A's count x B's count) / n^2,
      kappa         Cohen's kappa (p_o - p_e) / (1 - p_e); null when p_e = 1 (both raters used one and the same
                    class: kappa is undefined, not 0 or 1) or n = 0,
      kappa_lower, kappa_upper
                    its two-sided normal interval at var run_comparison_alpha with Cohen's (1960) large-sample
                    standard error sqrt(p_o (1 - p_o) / (n (1 - p_e)^2)), cut to kappa's scale [-1, 1], to 12
                    decimals: an interval that holds 0 says the rater is no better than chance (mart_judge_trust).
    One definition for every agreement mart (judge vs human labels, LLM inspector vs human inspection), so the two
    cannot drift apart in formula or column names. Keys may be null (pooled grains): groups and the join between
    the counts and the chance agreement treat null as a value.
-#}
{%- set key_list = [keys] if keys is string else keys -%}
{%- set compared = rater_a ~ ' is not null and ' ~ rater_b ~ ' is not null' -%}
select
    agreement.*,
    {%- for bound, sign in [('lower', '-'), ('upper', '+')] %}
    {{ comparable_mean(clamp_to_scale(
        'agreement.kappa ' ~ sign ~ ' normal_quantile(1 - ' ~ var('run_comparison_alpha') ~ ' / 2)'
        ~ ' * sqrt(agreement.accuracy * (1 - agreement.accuracy) / agreement.n) / (1 - agreement.p_expected)',
        '-1.0', '1.0')) }} as kappa_{{ bound }}{{ ',' if not loop.last }}
    {%- endfor %}
from (
select
    {%- for key in key_list %}
    pair_counts.{{ key }},
    {%- endfor %}
    pair_counts.n,
    pair_counts.n_agree,
    pair_counts.n_incomplete,
    case when pair_counts.n > 0 then cast(pair_counts.n_agree as double) / pair_counts.n end as accuracy,
    chance.p_expected,
    case
        when pair_counts.n > 0 and chance.p_expected < 1
            then (cast(pair_counts.n_agree as double) / pair_counts.n - chance.p_expected) / (1 - chance.p_expected)
    end as kappa
from (
    select
        {{ key_list | join(', ') }},
        count(*) filter (where {{ compared }}) as n,
        count(*) filter (where {{ rater_a }} = {{ rater_b }}) as n_agree,
        count(*) filter (where not ({{ compared }})) as n_incomplete
    from {{ pairs }}
    group by {{ key_list | join(', ') }}
) as pair_counts
left join (
    -- each class's count by rater A times its count by rater B, summed over the classes, over n^2
    select
        {{ key_list | join(', ') }},
        sum(cast(a_count as double) * b_count) / (cast(sum(a_count) as double) * sum(a_count)) as p_expected
    from (
        select {{ key_list | join(', ') }}, class, sum(a_vote) as a_count, sum(b_vote) as b_count
        from (
            select {{ key_list | join(', ') }}, {{ rater_a }} as class, 1 as a_vote, 0 as b_vote
            from {{ pairs }}
            where {{ compared }}
            union all
            select {{ key_list | join(', ') }}, {{ rater_b }} as class, 0 as a_vote, 1 as b_vote
            from {{ pairs }}
            where {{ compared }}
        ) as votes
        group by {{ key_list | join(', ') }}, class
    ) as class_counts
    group by {{ key_list | join(', ') }}
) as chance
    on {% for key in key_list %}chance.{{ key }} is not distinct from pair_counts.{{ key }}{{ "\n    and " if not loop.last }}{% endfor %}
) as agreement
{% endmacro %}
