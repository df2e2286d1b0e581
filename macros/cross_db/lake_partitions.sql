{% macro lake_partitions(table, partition_column, has_dataset) -%}
{#- A select of one lake table's partitions: table_name, partition_column, partition_value, dataset (null for a
    table without one, or a partition of several datasets), n_rows, loaded_at (its newest row's created_at). -#}
    {{ return(adapter.dispatch('lake_partitions', 'finrag')(table, partition_column, has_dataset)) }}
{%- endmacro %}

{% macro default__lake_partitions(table, partition_column, has_dataset) -%}
{#- DuckDB reads it from the Parquet files' metadata (row counts, and the min / max statistics of dataset and
    created_at), never their rows: a build costs the same whatever the lake holds. The partition is the file's
    directory (<column>=<value>); the files are those the lake source reads (lake_files). -#}
    {%- do source('lake', table) -%}  {#- the dependency on the lake table -#}
    {%- set location = lake_files(table) -%}
    select
        '{{ table }}' as table_name,
        '{{ partition_column }}' as partition_column,
        regexp_extract(file_name, '/{{ partition_column }}=([^/]*)/[^/]*$', 1) as partition_value,
        {% if has_dataset -%}
        case
            when min(stats_min_value) filter (where path_in_schema = 'dataset')
                = max(stats_max_value) filter (where path_in_schema = 'dataset')
                then min(stats_min_value) filter (where path_in_schema = 'dataset')
        end as dataset,
        {%- else -%}
        cast(null as string) as dataset,
        {%- endif %}
        sum(row_group_num_rows) filter (where path_in_schema = 'created_at') as n_rows,
        max(try_cast(stats_max_value as timestamptz)) filter (where path_in_schema = 'created_at') as loaded_at
    from parquet_metadata('{{ location }}')
    where path_in_schema in ('created_at', 'dataset')
    group by partition_value
    having sum(row_group_num_rows) filter (where path_in_schema = 'created_at') > 0
{%- endmacro %}

{% macro spark__lake_partitions(table, partition_column, has_dataset) -%}
{#- Spark has no Parquet metadata function: it counts the rows (every Spark build is a whole one anyway). -#}
    select
        '{{ table }}' as table_name,
        '{{ partition_column }}' as partition_column,
        {{ partition_column }} as partition_value,
        {{ 'dataset' if has_dataset else 'cast(null as string) as dataset' }},
        count(*) as n_rows,
        max(created_at) as loaded_at
    from {{ source('lake', table) }}
    group by {{ partition_column }}{{ ', dataset' if has_dataset }}
{%- endmacro %}
