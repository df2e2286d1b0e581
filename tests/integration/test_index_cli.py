"""`finrag index` on the toy corpus (support/toy_corpus.py): bad input (several chunkers, an unknown model, too few
vectors for an ANN index, an unknown dataset) names the field and indexes nothing; a good run reports its counts.
Real LanceDB, the packaged MiniLM."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.corpus.indexing import index_chunks
from support.toy_corpus import DATASET, FLAT, land_corpus

pytestmark = pytest.mark.slow


def test_index_bad_input(home: Path, finrag):
    land_corpus(home)
    with pytest.raises(InputError, match="several chunkers") as e:
        index_chunks(Lake(home), DATASET, None, progress=False)
    assert e.value.field == "chunker_id"
    with pytest.raises(InputError, match="cannot load model 'nobody/nothing'"):
        index_chunks(Lake(home), DATASET, FLAT, embedder="nobody/nothing", progress=False)
    with pytest.raises(InputError, match="at least 256 vectors"):
        index_chunks(Lake(home), DATASET, FLAT, ann=True, progress=False)
    assert not (home / "lance").exists() or not lancedb.connect(str(home / "lance")).list_tables().tables
    proc = finrag("index", "--dataset", "nope", check=False)
    assert proc.returncode == 2 and "no chunks for dataset 'nope'" in proc.stderr
    ok = finrag("index", "--dataset", DATASET, "--chunker-id", FLAT, "--long-text", "truncate")
    assert "embedded=10" in ok.stderr and "index toyfin.toy64" not in ok.stderr  # no bar: stderr is a pipe
    assert ok.stdout.strip().startswith("chunks__")  # the LanceDB table, alone
