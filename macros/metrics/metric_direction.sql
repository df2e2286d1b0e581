{#- Whether a score passes, in the metric's direction (the registry's higher_is_better), written once. Who won a
    question is the function pair_outcome (python_jobs/stats/paired_tests.py, registered into SQL), which
    `finrag compare` calls too. -#}

{% macro passes_threshold(value, threshold, higher_is_better) -%}
{#- Whether a score passes the metric's pass threshold in its direction: value >= threshold, or value <= threshold
    when lower is better; null when the value or the threshold is missing. -#}
    case
        when {{ higher_is_better }} then {{ value }} >= {{ threshold }}
        else {{ value }} <= {{ threshold }}
    end
{%- endmacro %}
