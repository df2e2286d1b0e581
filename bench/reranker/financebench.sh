#!/usr/bin/env bash
# The trained reranker on FinanceBench (bench/reranker/README.md): the retrieval-gap study's Table 1 rows here.
# Usage: FINRAG_HOME=<an empty home> bench/reranker/financebench.sh   (from the checkout; ../shared beside it)
# Steps are skipped by nothing: every id is a hash of its config and inputs, so a rerun lands the same runs.
set -euo pipefail
: "${FINRAG_HOME:?set FINRAG_HOME to an empty home}"
export FINRAG_HOME HF_HUB_OFFLINE=1
FB=${FB:-../shared/data/financebench}
F="nice -n ${NICE:-10} .venv/bin/finrag"
t() { local s=$SECONDS; "$@"; echo "[$(( SECONDS - s )) s] ${*:3}" >&2; }

t $F ingest financebench --questions $FB/data/financebench_open_source.jsonl \
    --documents $FB/data/financebench_document_information.jsonl --pdfs $FB/pdfs
t $F chunk --dataset financebench --preset 1024/128
t $F index --dataset financebench
t $F retrieve --retriever dense --dataset financebench --k 5
t $F retrieve --retriever dense --dataset financebench --k 5 --condition oracle_doc
t $F retrieve --retriever dense --dataset financebench --k 5 --condition oracle_page
# the reranker: pages as the page scorer reads them, dense's hard negatives, 5 document-level folds
R=$(t $F train-reranker --dataset financebench --passage page --epochs ${EPOCHS:-4} --negatives 8 --quiet)
echo "reranker training: $R" >&2
t $F retrieve --retriever rerank --reranker "trained:$R" --rerank-passage page --dataset financebench --k 5
# a cascade: the trained reranker's top 20 of dense's top 40, re-ranked by it again to k (its scores cached)
t $F retrieve --retriever rerank --reranker "trained:$R" --rerank-passage page --top-n 20 --first-stage rerank \
    --first-stage-reranker "trained:$R" --first-stage-rerank-passage page --first-stage-top-n 40 \
    --dataset financebench --k 5
if [ -z "${SKIP_PAGE_SCORER:-}" ]; then
    T=$(t $F train-page-scorer --dataset financebench --quiet)
    t $F retrieve --retriever page_scorer --model-training "$T" --dataset financebench --k 5
fi
if [ -n "${MULTI_HYDE:-}" ]; then  # calls the LLM ($FINRAG_LLM_BASE_URL, else the embedded SmolLM2: slow on CPU)
    t $F retrieve --retriever rerank --first-stage multi_hyde --reranker "trained:$R" --rerank-passage page \
        --dataset financebench --k 5
fi
t $F build
