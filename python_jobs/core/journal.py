"""The lake's swap machinery: the writer lock (and the readers' shared lock), the journal that makes a landing's
swap all or nothing, its staging and trash areas, and the work dirs of landings being prepared.

A landing stages its files, then writes its journal (the moves from staging into the lake) and applies it: a crash
before the journal is written leaves the old partitions (the staging area is discarded by the next recovery), after it
the next `Lake` (or reader) rolls the swap forward. Locks are flocks on lake/_lock, which the kernel drops when their
holder dies, so a killed job's journal is recovered by the next job, and only then.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from python_jobs.core.console import say

# writer locks this process holds: a read under one must not wait for it (flock is per open file, so a second
# open of lake/_lock in the same process would wait for the first forever)
_WRITING = 0
WORK_DIR = "landing_work"


def _try_flock(fd: int, mode: int) -> bool:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _flock(fd: int, mode: int, why: str) -> None:
    """Take the lock, saying why when it has to wait (a job that seems to hang is waiting for another)."""
    if not _try_flock(fd, mode):
        say(f"waiting for the lake: {why}")
        fcntl.flock(fd, mode)


def _apply_shard(staged: Path, target: Path, files: list[str], remove: list[str]) -> None:
    """A shard's swap: its files in (each rename atomic), then the files it replaces out. Re-applied by recovery
    after a kill: files already moved are skipped, and `remove` never names a file of this landing."""
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        if (staged / name).exists():
            os.replace(staged / name, target / name)
    for name in remove:
        (target / name).unlink(missing_ok=True)


class Journalled:
    """A lake directory whose landings swap their partitions in under a journal (the base of `Lake`)."""

    def __init__(self, root: Path, work: Path):
        self.root = root
        self._staging = self.root / "_staging"
        self._journal = self.root / "_journal"
        self._trash = self.root / "_trash"
        self._work = work

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A view of the lake no landing changes while it is held: a shared flock on lake/_lock, which a landing's
        check-and-swap (exclusive) waits for, and which waits for a swap under way. A landing killed mid-apply is
        rolled forward before the view is taken, so no reader sees one table of a load new and another old.
        `finrag build` (the dbt plugin) holds it for the whole build. A no-op under this process's own landing."""
        if _WRITING:
            yield
            return
        fd = os.open(self.root / "_lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if any(self._journal.glob("*.json")) and _try_flock(fd, fcntl.LOCK_EX):
                self._recover()  # nobody holds the lake: the journal is a killed landing's
            _flock(fd, fcntl.LOCK_SH, "a landing is swapping its partitions in")
            yield
        finally:
            os.close(fd)  # releases the lock

    @contextmanager
    def _writer_lock(self, wait: bool = True) -> Iterator[bool]:
        """The lake's one writer lock, an flock on lake/_lock: yields whether it is held (always, when waiting).
        The kernel drops it when its holder dies, so a killed job's journal is recovered by the next job, and only
        then: a live landing's journal and staging area are never touched. Not re-entrant (flock is per open file):
        nothing called under it takes it again."""
        global _WRITING
        fd = os.open(self.root / "_lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if wait:
                _flock(fd, fcntl.LOCK_EX, "another job is landing, or a build is reading the lake")
            elif not _try_flock(fd, fcntl.LOCK_EX):
                yield False
                return
            _WRITING += 1
            try:
                yield True
            finally:
                _WRITING -= 1
        finally:
            os.close(fd)  # releases the lock

    def _commit(self, txid: str, moves: list[dict], stage: Path) -> None:
        """Write the landing's journal, then apply its moves (see the module docstring)."""
        self._journal.mkdir(parents=True, exist_ok=True)
        journal = self._journal / f"{txid}.json"
        tmp = journal.with_suffix(".tmp")
        tmp.write_text(json.dumps({"txid": txid, "moves": moves}))
        os.replace(tmp, journal)  # from here on, the landing is committed: recover() rolls it forward
        self._apply(txid, moves)
        journal.unlink()
        shutil.rmtree(stage, ignore_errors=True)

    def _apply(self, txid: str, moves: list[dict]) -> None:
        for i, m in enumerate(moves):
            staged, target = Path(m["staged"]), Path(m["target"])
            if "files" in m:
                _apply_shard(staged, target, m["files"], m["remove"])
                continue
            if not staged.exists():  # already moved in by an earlier, interrupted apply
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                old = self._trash / txid / str(i)
                old.mkdir(parents=True, exist_ok=True)
                os.replace(target, old / target.name)
            os.replace(staged, target)
        shutil.rmtree(self._trash / txid, ignore_errors=True)

    def recover(self) -> None:
        """Finish landings whose journal was committed; discard staging areas of landings that never committed.
        Only when no landing is running (the writer lock is free): a running one owns its journal and staging."""
        with self._writer_lock(wait=False) as free:
            if free:
                self._recover()

    def _recover(self) -> None:
        if self._journal.exists():
            for journal in sorted(self._journal.glob("*.json")):
                entry = json.loads(journal.read_text())
                self._apply(entry["txid"], entry["moves"])
                journal.unlink()
                shutil.rmtree(self._staging / entry["txid"], ignore_errors=True)
            for tmp in self._journal.glob("*.tmp"):
                tmp.unlink()
        for d in (self._staging, self._trash):
            if d.exists():
                shutil.rmtree(d, ignore_errors=True)

    # ---- work areas of landings being prepared ----------------------------------------------------------------
    @contextmanager
    def work_dir(self) -> Iterator[Path]:
        """A private directory for a job preparing a sliced landing (its file's slices), outside the lake (dbt and
        `finrag build`'s change detection never see it) and removed on exit. Its owner holds an flock on its `lock`
        file; the next `Lake()` removes a work dir whose lock is free (its job was killed)."""
        d = self._work / uuid.uuid4().hex
        d.mkdir(parents=True)
        fd = os.open(d / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            (d / "owned").touch()  # only now may a free lock mean a dead owner (see _clean_work)
            yield d
        finally:
            shutil.rmtree(d, ignore_errors=True)
            os.close(fd)

    def _clean_work(self) -> None:
        if not self._work.exists():
            return
        for d in self._work.iterdir():
            lock = d / "lock"
            try:
                fd = os.open(lock, os.O_RDWR)
            except OSError:
                continue  # being created (its lock comes next), or not ours
            try:
                # a free lock on an owned dir: its job died (a dir not yet owned is one whose job is starting)
                if _try_flock(fd, fcntl.LOCK_EX) and (d / "owned").exists():
                    shutil.rmtree(d, ignore_errors=True)
            finally:
                os.close(fd)

