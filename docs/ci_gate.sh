#!/usr/bin/env bash
# A CI job's gate (docs/ci_gate.md): land the candidate's retrieval run, build the warehouse, gate the candidate
# against the baseline. Exit 0 pass (or inconclusive), 1 a loss beyond a margin, 2 the gate cannot be evaluated.
#
#   FINRAG_HOME   the warehouse home holding the baseline (restored from CI's cache or artifacts)
#   DATASET       the dataset the runs are of
#   CANDIDATE     the candidate's run id (e.g. pr-123)
#   RUN_FILE      the candidate's TREC run file (what the pipeline under test wrote)
#   GATE_FILE     the gate file (metrics, margins, slices, baseline)
#   BASELINE      optional: the baseline run id (else the gate file's `baseline`)
#   OUT_DIR       where gate.xml (JUnit) and gate.md (the pull-request comment) go (default gate-report)
#   BUILD_ARGS    optional: extra arguments of `finrag build` (dbt's, e.g. --exclude-resource-type test)
#   FINRAG        the finrag command (default finrag)
set -euo pipefail

finrag=${FINRAG:-finrag}
out=${OUT_DIR:-gate-report}
mkdir -p "$out"

"$finrag" ingest trec-run "$RUN_FILE" --dataset "$DATASET" --run-id "$CANDIDATE" --quiet >&2
"$finrag" build --quiet ${BUILD_ARGS:-}
"$finrag" gate "$GATE_FILE" --candidate "$CANDIDATE" ${BASELINE:+--baseline "$BASELINE"} \
    --junit "$out/gate.xml" --markdown "$out/gate.md"
