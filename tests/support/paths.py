"""Where things are: the checkout under test and the real benchmark files beside it."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(os.environ.get("FINRAG_SHARED_DATA", PROJECT.parent / "shared" / "data"))
