"""A 100,000-span OTLP/JSON file through `finrag ingest traces-otlp`: peak memory and time, and a re-ingest that
changes nothing. Run from the checkout with the project's interpreter (`/usr/bin/time` for the peak):

    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.traces.otlp_100k [--out DIR]

The traces are the integration test's (tests/support/otlp_traces.py: the real OpenTelemetry SDK, versions 1.0 in
GenAI conventions and 2.0 in OpenInference's), 14,000 per version, every trace of one day (two production runs):
100,800 spans in batches of 512 per line (the BatchSpanProcessor's default export size) and 16,800 evaluation log
records. Prints the file sizes, the ingest's wall time and peak RSS (GNU time's "Maximum resident set size" of the
finrag process), the re-ingest's, and whether the lake's part files are byte for byte the same after it (README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "tests"))

from support.otlp_traces import make_traces  # noqa: E402

N_PER_VERSION = 14_000


def lake_state(home: Path) -> dict[str, str]:
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((home / "lake").rglob("*.parquet"))}


def ingest(home: Path, files: list[Path]) -> tuple[float, int, str]:
    cmd = ["/usr/bin/time", "-v", str(PROJECT / ".venv" / "bin" / "finrag"), "--home", str(home), "ingest",
           "traces-otlp", *map(str, files)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=PROJECT,
                          env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    seconds = time.perf_counter() - start
    if proc.returncode:
        sys.exit(proc.stderr)
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    return seconds, peak_kb, proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="otlp-100k-"))
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    files, sent = make_traces(out, n_per_version=N_PER_VERSION, labelled=N_PER_VERSION // 10,
                              repeated=N_PER_VERSION // 10, batch=512, spacing_ms=6_000)
    spans = files[0].read_text().count('"spanId"')  # each span's own id ("parentSpanId" is another key)
    print(f"made {len(sent)} traces, {spans} spans with the SDK in {time.perf_counter() - start:.1f} s; "
          + ", ".join(f"{f.name} {f.stat().st_size / 2**20:.1f} MiB" for f in files))
    home = out / "warehouse"
    seconds, peak_kb, err = ingest(home, files)
    print(f"ingest: {seconds:.1f} s, peak RSS {peak_kb / 1024:.0f} MiB")
    print("\n".join(line for line in err.splitlines() if line.startswith("run ")))
    before = lake_state(home)
    seconds, peak_kb, err = ingest(home, files)
    after = lake_state(home)
    print(f"re-ingest: {seconds:.1f} s, peak RSS {peak_kb / 1024:.0f} MiB; "
          f"{'nothing changes' if 'nothing changes' in err else 'LANDED AGAIN'}; "
          f"lake part files {'identical' if before == after else 'CHANGED'} ({len(after)} files)")
    if before != after:
        sys.exit(1)


if __name__ == "__main__":
    main()
