{#-
    The ranking rule of a run, in one place (SPEC §5), in the two forms the models need:
    - our runs (ranks_by_score false): by the rank column;
    - imported TREC runs (ranks_by_score true): trec_eval's rule, score descending then unit (docno) descending;
      scores are compared as 32-bit floats, as trec_eval and pytrec_eval hold them, so scores that differ below
      float32 precision (1.00000001 vs 1.0) are ties broken by the docno. A missing score ranks last.
    A unit appears at most once in a run's ranking of a question (the contract's key of retrieval_results), so the
    order is total.
-#}

{% macro retrieval_score_key(score) -%}
    coalesce(cast({{ score }} as float), cast('-infinity' as float))
{%- endmacro %}


{% macro retrieval_rank_order(ranks_by_score, score_key, unit, rank) -%}
{#- ORDER BY terms of a run's ranking (for window functions), best first; score_key = retrieval_score_key(score):
    the ranking key (retrieval_order_key), then trec_eval's docno tie-break for runs ranked by score, then the rank
    itself (a float holds ranks exactly only up to 2^24). -#}
    {{ retrieval_order_key(ranks_by_score, score_key, rank) }} desc,
    case when {{ ranks_by_score }} then {{ unit }} end desc,
    {{ rank }}
{%- endmacro %}


{% macro retrieval_order_key(ranks_by_score, score_key, rank) -%}
{#- One number per result that orders a run's ranking best first, up to ties (the order of retrieval_rank_order
    without its tie-breaks): the score key for runs ranked by score, the negated rank for the others. -#}
    case when {{ ranks_by_score }} then {{ score_key }} else -cast({{ rank }} as float) end
{%- endmacro %}


{% macro retrieval_precedes(ranks_by_score, a, b) -%}
{#-
    True when result `a` ranks before result `b` of the same run and question (`a` and `b` are relation aliases
    with columns score_key = retrieval_score_key(score), unit_id and rank): the same order as retrieval_rank_order,
    as a predicate, so a result's position is 1 + the number of results that precede it.
-#}
    case
        when {{ ranks_by_score }} then {{ a }}.score_key > {{ b }}.score_key
            or ({{ a }}.score_key = {{ b }}.score_key and {{ a }}.unit_id > {{ b }}.unit_id)
        else {{ a }}.rank < {{ b }}.rank
    end
{%- endmacro %}


{% macro retrieval_run_results(runs) -%}
{#-
    A select of the results of the runs in relation `runs` (a CTE of retrieval_pending_runs()), with what the one
    ranking rule reads: run_id, dataset, question_id, rank, unit_id (the chunk: a result's unit at chunk
    granularity), doc_id, page_start, page_end, score, score_key (retrieval_score_key) and ranks_by_score.
    DuckDB prunes the lake's other run partitions from the scan by the join.
-#}
    select
        results.run_id,
        {{ runs }}.dataset,
        results.question_id,
        results.rank,
        results.chunk_id as unit_id,
        results.doc_id,
        results.page_start,
        results.page_end,
        results.score,
        {{ retrieval_score_key('results.score') }} as score_key,
        {{ runs }}.ranks_by_score
    from {{ ref('stg_lake__retrieval_results') }} as results
    inner join {{ runs }} on results.run_id = {{ runs }}.run_id
{%- endmacro %}


{% macro page_unit_id(doc_id, page_number) -%}
{#- A page's unit id at page granularity: `<doc_id>#p<page>` (0-based page). -#}
    {{ doc_id }} || '#p' || cast({{ page_number }} as string)
{%- endmacro %}


{% macro retrieval_top_results(results, depth) -%}
{#-
    The best `depth` results of every run x question of `results` (columns run_id, question_id, ranks_by_score,
    score_key, unit_id, rank, doc_id, page_start, page_end, score), in ranking order, with their 1-based
    result_position. A window over each question's results, on both engines: DuckDB sorts a window's partitions
    out of core, where the bounded top-N aggregate it replaced (max_by(x, key, n) of whole rows) kept every
    question's heap of rows in memory and failed a 100M-result build under 8 GB. Before the window, a question's
    results are cut to those whose ranking key reaches its `depth`-th best key (ties kept: the window breaks them),
    so the window sorts about `depth` rows per question instead of all of them (10M results: 2.5 s instead of
    6.2 s); that key's heap is `depth` floats per question.
-#}
    with cut_offs as (
        select
            run_id,
            question_id,
            {{ nth_largest(retrieval_order_key('ranks_by_score', 'score_key', 'rank'), depth) }} as cut_off_key
        from {{ results }}
        group by run_id, question_id
    ),

    candidates as (
        select results.*
        from {{ results }} as results
        inner join cut_offs
            on results.run_id = cut_offs.run_id
            and results.question_id = cut_offs.question_id
        where {{ retrieval_order_key('results.ranks_by_score', 'results.score_key', 'results.rank') }}
            >= cut_offs.cut_off_key
    ),

    positioned as (
        select
            run_id,
            question_id,
            rank,
            unit_id,
            doc_id,
            page_start,
            page_end,
            score,
            cast(row_number() over (
                partition by run_id, question_id
                order by {{ retrieval_rank_order('ranks_by_score', 'score_key', 'unit_id', 'rank') }}
            ) as integer) as result_position
        from candidates
    )

    select * from positioned
    where result_position <= {{ depth }}
{%- endmacro %}



{% macro retrieval_ranked_documents(positioned) -%}
{#-
    Documents ranked by their first occurrence in a positioned result list (`positioned`: run_id, question_id,
    doc_id, result_position): run_id, question_id, doc_id, first_result_position, unit_rank.
-#}
    with first_positions as (
        select run_id, question_id, doc_id, min(result_position) as first_result_position
        from {{ positioned }}
        group by run_id, question_id, doc_id
    )

    select
        run_id,
        question_id,
        doc_id,
        first_result_position,
        row_number() over (partition by run_id, question_id order by first_result_position) as unit_rank
    from first_positions
{%- endmacro %}


{% macro retrieval_ranked_pages(positioned) -%}
{#-
    Pages ranked by their first occurrence, then page number within one result (a result covers pages
    page_start..page_end of its document; results without pages cover none): run_id, question_id, doc_id,
    page_number, unit_id, first_result_position, unit_rank.
-#}
    with covered_pages as (
        select
            run_id,
            question_id,
            doc_id,
            result_position,
            {{ unnest_series('page_start', chunk_last_page('page_start', 'page_end')) }} as page_number
        from {{ positioned }}
        where page_start is not null
    ),

    first_positions as (
        select run_id, question_id, doc_id, page_number, min(result_position) as first_result_position
        from covered_pages
        group by run_id, question_id, doc_id, page_number
    )

    select
        run_id,
        question_id,
        doc_id,
        page_number,
        {{ page_unit_id('doc_id', 'page_number') }} as unit_id,
        first_result_position,
        row_number() over (
            partition by run_id, question_id order by first_result_position, page_number
        ) as unit_rank
    from first_positions
{%- endmacro %}
