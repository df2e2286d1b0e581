-- What the LLM calls cost, per job run, purpose and model: calls, failures, retried calls, tokens, latency p50 / p95
-- and cost. Job run: the client's ledger batches are `<job run>-<seq 5 digits>` and a job run is
-- `<job>-<UTC time>-<hex 6>`, the job naming what it worked on (answer-<dataset>, judge-<answer run>,
-- retrieve-<retriever>, generate-qa-<dataset>). cost_usd prices the tokens with the llm_prices seed as it is now;
-- recorded_cost_usd sums what each call recorded at call time (the seed then). Requests served from the cache made no
-- call and cost nothing: the ledger's cache rows (attempts 0, cache_hits > 0) count them in n_cached_calls only.

{% set job_pattern = '^(generate-qa|answer|judge|retrieve)-(.+)$' %}

with calls as (

    select
        *,
        regexp_replace(batch_id, '-[0-9]{5}$', '') as job_run_id,
        coalesce(cache_hits, 0) > 0 and attempts = 0 as is_cache_row
    from {{ ref('stg_lake__llm_calls') }}

),

prices as (

    select * from {{ ref('llm_prices') }}

),

priced_calls as (

    select
        calls.*,
        regexp_extract(calls.job_run_id, '^(.*)-[0-9]{8}T[0-9]{6}-[0-9a-f]{6}$', 1) as job_name,
        prices.model is not null as is_priced,
        coalesce(calls.prompt_tokens, 0) / 1000.0 * prices.input_usd_per_1k_tokens
        + coalesce(calls.completion_tokens, 0) / 1000.0 * prices.output_usd_per_1k_tokens as priced_cost_usd
    from calls
    left join prices on calls.model = prices.model

),

-- the job name is `<job>-<subject>`: answer-<dataset>, judge-<answer run>, retrieve-<retriever>,
-- generate-qa-<dataset>
named_calls as (

    select
        *,
        regexp_extract(job_name, '{{ job_pattern }}', 1) as job_kind,
        regexp_extract(job_name, '{{ job_pattern }}', 2) as job_subject_name
    from priced_calls

),

final as (

    select
        job_run_id,
        coalesce(nullif(job_kind, ''), 'other') as job,
        nullif(job_subject_name, '') as job_subject,
        purpose,
        model,
        count(*) filter (where not is_cache_row) as n_calls,
        cast(coalesce(sum(cache_hits) filter (where is_cache_row), 0) as bigint) as n_cached_calls,
        count(*) filter (where error is not null) as n_failed,
        count(*) filter (where attempts > 1) as n_retried,
        cast(coalesce(sum(prompt_tokens), 0) as bigint) as prompt_tokens,
        cast(coalesce(sum(completion_tokens), 0) as bigint) as completion_tokens,
        {{ round_double(continuous_quantile('latency_ms', 0.5), 3) }} as latency_p50_ms,
        {{ round_double(continuous_quantile('latency_ms', 0.95), 3) }} as latency_p95_ms,
        case when bool_and(is_priced) then sum(priced_cost_usd) end as cost_usd,
        sum(cost_usd) as recorded_cost_usd,
        min(created_at) as first_call_at,
        max(created_at) as last_call_at
    from named_calls
    group by job_run_id, job_kind, job_subject_name, purpose, model

),

-- when the job run started, over all its purposes and models: how readers label and order job runs
with_start as (

    select
        *,
        min(first_call_at) over (partition by job_run_id) as job_started_at
    from final

)

select * from with_start
