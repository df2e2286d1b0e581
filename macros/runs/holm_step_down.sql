{% macro holm_step_down(relation, keys, family, tie_break, p='p_randomization', where='true') %}
{#-
    Holm's step-down adjustment, written once for every family of comparisons a model adjusts over: within each
    family (the rows sharing the `family` columns) the p-values in ascending order (nulls last, then `tie_break`, so
    equal p-values rank the same way on every engine), the i-th of m non-null ones becomes
    min(1, max over j <= i of (m - j + 1) * p_j); a null p stays null. Two steps, since a window cannot hold another:
    the rank and the family's count, then the running maximum. A select of `keys` and p_holm.
-#}
    select
        {{ keys | join(', ') }},
        case
            when {{ p }} is not null then least(1.0, max((holm_size - holm_rank + 1) * {{ p }}) over (
                    partition by {{ family | join(', ') }} order by holm_rank
                    rows between unbounded preceding and current row
                ))
        end as p_holm
    from (
        select
            *,
            row_number() over (
                partition by {{ family | join(', ') }} order by {{ p }} nulls last, {{ tie_break | join(', ') }}
            ) as holm_rank,
            count({{ p }}) over (partition by {{ family | join(', ') }}) as holm_size
        from {{ relation }}
        where {{ where }}
    ) as holm_ranked
{% endmacro %}
