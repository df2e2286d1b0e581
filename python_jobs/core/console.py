"""What jobs tell the user while they run: progress notes and warnings go to stderr (stdout is for results)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a note or a bar is drawn: `finrag --help` and the read verbs draw none
    from tqdm import tqdm

# -1 quiet (errors and warnings only), 0 normal (notes too), 1 verbose (and the libraries' INFO logs). Held in the
# environment so the processes a job starts (dbt, PDF workers, the embedded LLM server) follow it.
VERBOSITY_ENV = "FINRAG_VERBOSITY"
QUIET, NORMAL, VERBOSE = -1, 0, 1


def verbosity() -> int:
    try:
        return max(QUIET, min(VERBOSE, int(os.environ.get(VERBOSITY_ENV, NORMAL))))
    except ValueError:
        return NORMAL


def set_verbosity(level: int) -> None:
    """The verb's --quiet / --verbose: for this process and the ones it starts."""
    os.environ[VERBOSITY_ENV] = str(level)
    if level <= QUIET:
        os.environ["TQDM_DISABLE"] = "1"
    if level >= VERBOSE:
        import logging

        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")


def say(msg: str) -> None:
    """A note on stderr; --quiet keeps only warnings."""
    if verbosity() <= QUIET and not msg.startswith("warning"):
        return
    # through tqdm, so a note never breaks a progress bar that is being drawn
    from tqdm import tqdm

    tqdm.write(msg, file=sys.stderr)


def _bars_off_by_env() -> bool:
    # tqdm's own variable, as its users set it; "0" / "false" / empty leave bars on
    return os.environ.get("TQDM_DISABLE", "").strip().lower() not in ("", "0", "false", "no")


def progress(iterable: Iterable[Any] | None = None, *, desc: str, unit: str, total: float | None = None,
             enabled: bool = True) -> tqdm:
    """The one way jobs draw a progress bar: on stderr, and only where a person watches it. Off when the caller
    turns it off, when TQDM_DISABLE is set, and when stderr is not a terminal (a log file, CI, a pipe), so logs
    hold notes, not thousands of bar redraws."""
    from tqdm import tqdm

    off = not enabled or _bars_off_by_env() or not sys.stderr.isatty()
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=off)
