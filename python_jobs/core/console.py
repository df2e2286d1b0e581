"""What jobs tell the user while they run: progress notes and warnings go to stderr (stdout is for results)."""

from __future__ import annotations

import sys

from tqdm import tqdm


def say(msg: str) -> None:
    # through tqdm, so a note never breaks a progress bar that is being drawn
    tqdm.write(msg, file=sys.stderr)
