"""Chunking by hand: token windows (size, overlap, the short last window, no empty chunks) and chunker ids that
encode their settings."""

from __future__ import annotations

import pytest

from python_jobs.core.errors import InputError
from python_jobs.corpus.chunking import ChunkerSpec, token_windows


def test_token_windows_by_hand() -> None:
    assert token_windows(10, 4, 1) == [(0, 4), (3, 7), (6, 10)]
    assert token_windows(11, 4, 1) == [(0, 4), (3, 7), (6, 10), (9, 11)]  # the last window is short
    assert token_windows(3, 4, 1) == [(0, 3)]
    assert token_windows(0, 4, 1) == []  # no empty chunks
    assert token_windows(8, 4, 0) == [(0, 4), (4, 8)]


def test_chunker_id_encodes_settings() -> None:
    assert ChunkerSpec(1024, 128).chunker_id == "tok1024o128-minilm"
    assert ChunkerSpec(256, 32, "minilm", 1024, 128).chunker_id == "tok256o32-parent1024o128-minilm"
    with pytest.raises(InputError, match="overlap"):
        ChunkerSpec(4, 4)
    with pytest.raises(InputError, match="parent size"):
        ChunkerSpec(256, 32, "minilm", 256, 0)
