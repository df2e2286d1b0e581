{% test column_rules(model, not_null=[], unique=[], in_range={}, accepted_values={}) %}
{#-
    A model's own column rules in one test node: dbt's not_null, unique and accepted_values, and the project's
    bounds. Each data test node costs dbt a query and its own per-node overhead (~30 ms of a DuckDB build, ~0.3 s of
    a Spark build), and most models had four or more such tests. The row rules are counted in one pass over the model
    (a branch per rule cost Spark a plan and a scan each); each key is grouped in a branch of its own.
    - not_null: columns that hold no null;
    - unique: keys (lists of columns) with one row per value; null parts compare as values;
    - in_range: column -> {min_value, max_value} (either bound optional): every non-null value within them;
    - accepted_values: column -> the values it may hold (nulls are not checked, as dbt's accepted_values).
    Fails with one row per rule and column that is broken: rule, column_name, expected, n_failing (the rows, or for
    `unique` the duplicated keys).
-#}
{%- set row_rules = [] %}
{%- for column in not_null %}
    {%- do row_rules.append({'rule': 'not_null', 'column': column, 'expected': 'not null',
                             'failing': column ~ ' is null'}) %}
{%- endfor %}
{%- for column, bounds in in_range.items() %}
    {%- set min_value, max_value = bounds.get('min_value'), bounds.get('max_value') %}
    {%- set outside = [] %}
    {%- if min_value is not none %}{% do outside.append(column ~ ' < ' ~ min_value) %}{% endif %}
    {%- if max_value is not none %}{% do outside.append(column ~ ' > ' ~ max_value) %}{% endif %}
    {%- do row_rules.append({'rule': 'in_range', 'column': column,
                             'expected': '[' ~ ('' if min_value is none else min_value) ~ ', '
                                         ~ ('' if max_value is none else max_value) ~ ']',
                             'failing': column ~ ' is not null and (' ~ outside | join(' or ') ~ ')'}) %}
{%- endfor %}
{%- for column, values in accepted_values.items() %}
    {%- set literals = [] %}
    {%- for value in values %}
        {%- do literals.append(value if value is number else "'" ~ value | replace("'", "''") ~ "'") %}
    {%- endfor %}
    {%- do row_rules.append({'rule': 'accepted_values', 'column': column, 'expected': values | join(', '),
                             'failing': column ~ ' is not null and ' ~ column ~ ' not in (' ~ literals | join(', ')
                                        ~ ')'}) %}
{%- endfor %}
{%- if row_rules %}
with rule_counts as (

    select
        {%- for r in row_rules %}
        count(case when {{ r.failing }} then 1 end) as n_{{ loop.index }}{{ "," if not loop.last }}
        {%- endfor %}
    from {{ model }}

),

declared_rules as (

    select * from (values
        {%- for r in row_rules %}
        ({{ loop.index }}, '{{ r.rule }}', '{{ r.column }}', '{{ r.expected | replace("'", "''") }}')
        {{- "," if not loop.last }}
        {%- endfor %}
    ) as declared (rule_index, rule, column_name, expected)

),

broken_row_rules as (

    select
        declared_rules.rule,
        declared_rules.column_name,
        declared_rules.expected,
        case declared_rules.rule_index
            {%- for r in row_rules %}
            when {{ loop.index }} then rule_counts.n_{{ loop.index }}
            {%- endfor %}
        end as n_failing
    from declared_rules
    cross join rule_counts

)
{%- endif %}

{% if row_rules %}
select rule, column_name, expected, n_failing from broken_row_rules where n_failing > 0
{%- endif %}
{%- for key in unique %}
{#- the key's parts as grouped: null parts compare as values #}
{%- set parts = [] %}
{%- for column in key %}{% do parts.append("coalesce(cast(" ~ column ~ " as string), '<null>')") %}{% endfor %}
{{ "union all" if row_rules or not loop.first }}
select
    'unique' as rule,
    '{{ key | join(", ") }}' as column_name,
    'one row per value' as expected,
    count(*) as n_failing
from (
    select 1 as duplicated
    from {{ model }}
    -- every row is grouped by one number, its key's hash (equal keys hash alike, null parts too), and the exact key
    -- only for the rows whose hash repeats, which hold every duplicate: 100M staged results' key test took 45.3 s
    -- this way against 69.9 s grouping every row's key as strings
    where hash({{ key | join(', ') }}) in (
        select hash({{ key | join(', ') }}) as key_hash
        from {{ model }}
        group by key_hash
        having count(*) > 1
    )
    group by {{ parts | join(', ') }}
    having count(*) > 1
) as duplicated_keys
having count(*) > 0
{%- endfor %}
{% endtest %}
