{#- The two rules that read a metric's direction (the registry's higher_is_better), written once: every model that
    says who won a question or whether a score passes calls them. -#}

{% macro pair_outcome(diff, higher_is_better) -%}
{#- B's outcome on a question from diff = B - A: 'win' when B is better in the metric's direction (higher, or lower
    when higher_is_better is false), 'loss' when worse, 'tie' when equal; null when either score is missing. -#}
    case
        when {{ diff }} = 0 then 'tie'
        when ({{ diff }} > 0) = {{ higher_is_better }} then 'win'
        when {{ diff }} is not null then 'loss'
    end
{%- endmacro %}

{% macro passes_threshold(value, threshold, higher_is_better) -%}
{#- Whether a score passes the metric's pass threshold in its direction: value >= threshold, or value <= threshold
    when lower is better; null when the value or the threshold is missing. -#}
    case
        when {{ higher_is_better }} then {{ value }} >= {{ threshold }}
        else {{ value }} <= {{ threshold }}
    end
{%- endmacro %}
