#!/usr/bin/env bash
# The trained reranker on FinanceBench (bench/reranker/README.md): the retrieval-gap study's Table 1 rows here.
# Usage: FINRAG_HOME=<a home> bench/reranker/financebench.sh   (from the checkout; ../shared beside it)
# Every id is a hash of its config and inputs, so a rerun lands the same runs. Options (environment):
#   SKIP_INGEST=1 (the home has the dataset); ONLY_WITH_PDFS=1 (ingest only the 41 questions whose PDF is here: the
#   others have no gold page in the lake and count in no DocRec / PageRec, so the figures and run ids are the same at
#   about a quarter of the reranking); EPOCHS (the reranker's, default 2); WINDOWS=0 (whole pages instead of page
#   windows scored by their best, MaxP); STRIDE (the windows' step, default 0.5); MAX_LENGTH (default 256);
#   PAGE_SCORER=1 (also train and run the page scorer, ~15 min more); CASCADE=1 (also the cascade run);
#   MULTI_HYDE=1 (Multi-HyDE + reranker: multi_hyde as the rerank's first stage; calls the LLM);
#   NICE (the runs' niceness, default 10); BASE_MODEL (what the reranker is fine-tuned from: a local cross-encoder, as
#   bench/reranker/pretrain_tatqa.py saves one; default the packaged MiniLM).
set -euo pipefail
: "${FINRAG_HOME:?set FINRAG_HOME to a home}"
export FINRAG_HOME HF_HUB_OFFLINE=1
FB=${FB:-../shared/data/financebench}
F="nice -n ${NICE:-10} .venv/bin/finrag"
t() { local s=$SECONDS; "$@"; echo "[$(( SECONDS - s )) s] ${*:4:3}" >&2; }

Q=$FB/data/financebench_open_source.jsonl
if [ -n "${ONLY_WITH_PDFS:-}" ]; then  # the questions whose filing's PDF is here: the only ones with gold pages
    Q=$(mktemp --suffix .jsonl)
    .venv/bin/python -c 'import json, os, sys; have = {f[:-4] for f in os.listdir(sys.argv[1])}
for line in open(sys.argv[2]):
    if json.loads(line)["doc_name"] in have: print(line, end="")' "$FB/pdfs" "$FB/data/financebench_open_source.jsonl" > "$Q"
fi
if [ -z "${SKIP_INGEST:-}" ]; then
    t $F ingest financebench --questions "$Q" \
        --documents $FB/data/financebench_document_information.jsonl --pdfs $FB/pdfs
fi
t $F chunk --dataset financebench --preset 1024/128
t $F index --dataset financebench
t $F retrieve --retriever dense --dataset financebench --k 5
t $F retrieve --retriever dense --dataset financebench --k 5 --condition oracle_doc
t $F retrieve --retriever dense --dataset financebench --k 5 --condition oracle_page
# the reranker: pages as the page scorer reads them, dense's hard negatives, document-level folds
# (its training also chooses each fold's fusion weight on the fold's training questions and caches their scores)
W=--page-windows; [ "${WINDOWS:-1}" = 0 ] && W=--whole-pages
R=$(t $F train-reranker --dataset financebench --passage page --folds 3 --epochs "${EPOCHS:-2}" --negatives 5 \
    --batch-size 8 --learning-rate 1e-4 --base-model "${BASE_MODEL:-all-MiniLM-L6-v2}" $W \
    --window-stride "${STRIDE:-0.5}" --max-length "${MAX_LENGTH:-256}" --quiet)
echo "reranker training: $R" >&2
t $F retrieve --retriever rerank --reranker "trained:$R" --rerank-passage page --dataset financebench --k 5
t $F retrieve --retriever rerank --reranker "trained:$R" --rerank-passage page --rerank-fusion trained \
    --dataset financebench --k 5
if [ "${WINDOWS:-1}" != 0 ]; then  # the windowed training's fold models on whole pages too (the README's table)
    t $F retrieve --retriever rerank --reranker "trained:$R" --rerank-passage page --page-windows false \
        --dataset financebench --k 5
fi
if [ -n "${CASCADE:-}" ]; then  # the reranker's top 20 of its own rerank of dense's top 40 (its scores cached)
    t $F retrieve --retriever rerank --reranker "trained:$R" --rerank-passage page --top-n 20 --first-stage rerank \
        --first-stage-reranker "trained:$R" --first-stage-rerank-passage page --first-stage-top-n 40 \
        --dataset financebench --k 5
fi
if [ -n "${PAGE_SCORER:-}" ]; then
    T=$(t $F train-page-scorer --dataset financebench --quiet)
    t $F retrieve --retriever page_scorer --model-training "$T" --dataset financebench --k 5
fi
if [ -n "${MULTI_HYDE:-}" ]; then  # calls the LLM ($FINRAG_LLM_BASE_URL, else the embedded SmolLM2: slow on CPU)
    t $F retrieve --retriever rerank --first-stage multi_hyde --reranker "trained:$R" --rerank-passage page \
        --dataset financebench --k 5
    t $F retrieve --retriever rerank --first-stage multi_hyde --reranker "trained:$R" --rerank-passage page \
        --rerank-fusion trained --dataset financebench --k 5
fi
t $F build
