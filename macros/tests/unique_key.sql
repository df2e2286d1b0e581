{% test unique_key(model, columns) %}
{#- A composite key is unique. Null parts are compared as values (coalesced to a marker). -#}
select
    {% for col in columns %}coalesce(cast({{ col }} as string), '<null>') as {{ col }}, {% endfor %}
    count(*) as n_rows
from {{ model }}
group by all
having count(*) > 1
{% endtest %}
