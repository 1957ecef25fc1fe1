"""Benchmark: read_l0_increment must cost time proportional to the batch, not the shard.

Generates a 1 MB and a 1 GB L0 shard in a temporary directory under /tmp (deleted
afterwards), places the cursor near the end of each, times the service call several
times and prints the times and the ratio of the medians (expected close to 1).

    .venv/bin/python bench/l0_increment.py [--runs 15] [--big-mb 1024]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAIL_ROWS = 300  # unique rows after the cursor; the bulk before it is repeated blocks


def _row(i: int, line: int) -> dict:
    role = ("user", "assistant", "tool")[i % 3]
    return {
        "id": f"m{i}", "role": role, "content": f"message {i} " + "lorem ipsum dolor sit amet " * 8,
        "timestamp": 1_700_000_000_000 + i, "recordedAt": "2026-01-05T10:00:00.000000Z",
        "sessionKey": f"s{i % 7}", "sessionId": None, "cwd": "/work/repo", "sourceLine": line,
    }


def _line(i: int, line: int) -> bytes:
    return (json.dumps(_row(i, line), separators=(",", ":")) + "\n").encode()


def generate(path: Path, target_bytes: int) -> int:
    """Write ~target_bytes; returns the byte offset where the unique tail (and the cursor) starts."""
    block_rows = 100
    block = b"".join(_line(i, i + 1) for i in range(block_rows))
    tail_estimate = len(_line(0, 1)) * TAIL_ROWS
    repeats = max(1, round((target_bytes - tail_estimate) / len(block)))
    with open(path, "wb") as fh:
        big = block * 64
        written_blocks = 0
        while written_blocks + 64 <= repeats:  # large writes: ~1 GB in a few seconds
            fh.write(big)
            written_blocks += 64
        while written_blocks < repeats:
            fh.write(block)
            written_blocks += 1
        cursor = fh.tell()
        first_line = repeats * block_rows + 1
        fh.write(b"".join(_line(10_000_000 + k, first_line + k) for k in range(TAIL_ROWS)))
        fh.flush()
        os.fsync(fh.fileno())  # so background writeback does not run during the timed calls
    return cursor


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--big-mb", type=int, default=1024)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="mw-l0-bench-", dir="/tmp"))
    try:
        os.environ["MEMORYWEB_DATA_DIR"] = str(tmp / "data")
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from apps.accounts.services import profile_create
        from apps.conversations.services import l0_dir, l0_read_increment

        profile = profile_create(slug="bench")
        sizes = {"1MB": 1024 * 1024, f"{args.big_mb}MB": args.big_mb * 1024 * 1024}
        shards: dict[str, tuple[str, dict]] = {}
        for n, (label, target) in enumerate(sizes.items(), start=1):
            shard = f"2026-01-0{n}.jsonl"
            path = l0_dir(profile) / shard
            t0 = time.perf_counter()
            cursor_offset = generate(path, target)
            print(f"{label:>7}: shard {path.stat().st_size / 1e6:9.1f} MB generated in {time.perf_counter() - t0:4.1f} s, cursor at byte {cursor_offset}")
            shards[label] = (shard, {"version": 2, "files": {shard: cursor_offset}})
        # Interleave the runs so that load from other processes hits both sizes alike.
        results: dict[str, list[float]] = {label: [] for label in shards}
        for _ in range(args.runs):
            for label, (shard, cursor) in shards.items():
                start = time.perf_counter()
                out = l0_read_increment(profile=profile, l0_files=shard, cursor=cursor)
                results[label].append(time.perf_counter() - start)
                assert len(out["messages"]) == 25 and len(out["background"]) == 5 and out["truncated"]
        for label, times in results.items():
            print(
                f"{label:>7}: read_l0_increment ms: " + ", ".join(f"{t * 1000:.1f}" for t in times)
                + f"; median {statistics.median(times) * 1000:.2f} ms"
            )
        small, big = (statistics.median(v) for v in results.values())
        print(f"ratio of medians (big / small): {big / small:.2f}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
