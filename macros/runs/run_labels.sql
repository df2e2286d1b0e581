{#- Parts of the run labels dim_runs writes (what people read in every list of runs). -#}

{% macro last_path_component(column) -%}
{#- A model path's last component (sentence-transformers/all-MiniLM-L6-v2 -> all-MiniLM-L6-v2; a trailing slash
    ignored); null for null or empty. -#}
    nullif(regexp_extract({{ column }}, '([^/]+)/*$', 1), '')
{%- endmacro %}

{% macro splits_label(column) -%}
{#- A run's question splits as people read them: 'all splits' (null or empty: every question of the dataset) or
    'split test+dev'. -#}
    case
        when {{ column }} is null or {{ list_size(column) }} = 0 then 'all splits'
        else 'split ' || {{ list_join(column, "'+'") }}
    end
{%- endmacro %}

{% macro production_window_label(start_column, end_column) -%}
{#- A production run's time window as people read it: its first day (UTC) and hour, and its length in hours
    ('window 2026-11-02 00h +24h'); null for a run without one. -#}
    case
        when {{ start_column }} is not null then 'window ' || cast(cast({{ start_column }} as date) as string) || ' '
            || lpad(cast(extract(hour from {{ start_column }}) as string), 2, '0') || 'h +'
            || cast({{ dbt.datediff(start_column, end_column, 'hour') }} as string) || 'h'
    end
{%- endmacro %}
