"""Append-only JSONL shards on disk: the safe appender and bounded forward/backward readers.

Nothing here knows about profiles or the database; `services.py` builds on it for L0 and
the skill feed.

Appending: writers in several processes serialise on an exclusive `flock` of the shard
itself. Under the lock the writer learns the shard's line count from a small sidecar
(`<state_dir>/<shard>.count`, "size lines"); if the shard's size differs from the one
recorded (an agent appended or dropped lines itself) it recounts — only the new bytes when
the shard grew, the whole shard when it shrank. Each batch is one `write()` of whole lines,
so readers never see interleaved rows. A shard ending in a partial line (an agent still
writing without the lock) is closed with a newline first, so our rows never glue onto it;
the partial line then reads as one malformed line.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Appended:
    offset: int  # byte offset of the line start
    length: int  # bytes including the newline
    line: int  # 1-based line number in the shard
    row: dict[str, Any]


def dumps_line(row: dict[str, Any]) -> bytes:
    # json.dumps escapes control characters, so the only b"\n" is the terminator.
    return (json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _count_newlines(fd: int, start: int, end: int) -> int:
    count = 0
    pos = start
    while pos < end:
        chunk = os.pread(fd, min(CHUNK * 16, end - pos), pos)
        if not chunk:
            break
        count += chunk.count(b"\n")
        pos += len(chunk)
    return count


def _read_state(state_file: Path) -> tuple[int, int] | None:
    try:
        size_text, lines_text = state_file.read_text().split()
        size, lines = int(size_text), int(lines_text)
    except (OSError, ValueError):
        return None
    return (size, lines) if size >= 0 and lines >= 0 else None


def _write_state(state_file: Path, size: int, lines: int) -> None:
    tmp = state_file.with_name(state_file.name + f".{os.getpid()}.tmp")
    tmp.write_text(f"{size} {lines}\n")
    os.replace(tmp, state_file)


@contextmanager
def exclusive_lock(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive `flock` of `lock_file` (created if missing) for the block: one
    holder at a time across threads and processes; closing the file releases it."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _open_locked(shard: Path) -> tuple[int, bool]:
    """Open `shard` for appending and take its lock. Returns (fd, created): `created` when
    this call made the file, so a failed first write can remove it again. A writer that
    waited for the lock on a file removed meanwhile opens the new one instead of writing
    into the removed inode."""
    while True:
        try:
            fd, created = os.open(shard, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644), True
        except FileExistsError:
            try:
                fd, created = os.open(shard, os.O_RDWR | os.O_APPEND), False
            except FileNotFoundError:
                continue  # removed between the two opens: try again
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(shard).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd, created
        os.close(fd)


def append_rows(
    shard: Path,
    state_dir: Path,
    rows: list[dict[str, Any]],
    stamp: Callable[[dict[str, Any], int], dict[str, Any]],
) -> list[Appended]:
    """Append `rows` to `shard` as one write. `stamp(row, line_number)` returns the row to
    store (called under the lock, so stamps such as recordedAt are in file order). A shard
    exists only with its first row: a failed first write removes the file it created."""
    shard.parent.mkdir(parents=True, exist_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    state_file = state_dir / f"{shard.name}.count"
    fd, created = _open_locked(shard)
    try:
        size = os.fstat(fd).st_size
        state = _read_state(state_file)
        if state is not None and state[0] == size:
            lines = state[1]
        elif state is not None and state[0] < size:
            lines = state[1] + _count_newlines(fd, state[0], size)
        else:
            lines = _count_newlines(fd, 0, size)
        prefix = b""
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            prefix = b"\n"
            lines += 1
        out: list[Appended] = []
        parts = [prefix]
        offset = size + len(prefix)
        for row in rows:
            lines += 1
            stored = stamp(row, lines)
            data = dumps_line(stored)
            out.append(Appended(offset=offset, length=len(data), line=lines, row=stored))
            parts.append(data)
            offset += len(data)
        payload = b"".join(parts)
        try:
            written = 0
            while written < len(payload):
                written += os.write(fd, payload[written:])
            os.fsync(fd)
        except OSError:
            # Disk full, quota, I/O error: take the partial batch back out (we hold the
            # lock, so nobody appended after us) so a failed call leaves the shard as it was
            # and the caller's retry stores each row once.
            os.ftruncate(fd, size)
            if created and size == 0:
                os.unlink(shard)  # we still hold the lock: nobody wrote into it
            raise
        try:
            _write_state(state_file, size + len(payload), lines)
        except OSError:
            # The sidecar is only a cache of the line count: the rows are stored, and the
            # next writer sees a size mismatch and recounts the new bytes.
            pass
        return out
    finally:
        os.close(fd)  # closing releases the flock


@dataclass(frozen=True)
class Line:
    offset: int  # byte offset of the line start
    end: int  # byte offset just past the newline
    raw: bytes  # without the newline
    row: dict[str, Any] | None  # None: not a JSON object (malformed)


MAX_ROW_DEPTH = 64  # lists/objects nested deeper than this make a row malformed


def nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects nest more than `limit` levels in `value` (iterative)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """The JSON object of a line, or None for a malformed one: not UTF-8, not JSON, not an
    object, or nested absurdly deep (which neither the decoder nor the answer's encoder
    can handle, so such a line would otherwise fail every read that reaches it)."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or nests_deeper_than(value, MAX_ROW_DEPTH):
        return None
    return value


def iter_forward(path: Path, start: int) -> Iterator[Line]:
    """Complete lines from byte `start`, in order; a final line without newline is never
    yielded. Reads in chunks, so stopping early costs only what was read; a long line is
    assembled from its pieces once (no quadratic re-copying)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        line_start = start
        pieces: list[bytes] = []
        while True:
            chunk = fh.read(CHUNK)
            if not chunk:
                return
            cut = 0
            while True:
                nl = chunk.find(b"\n", cut)
                if nl < 0:
                    break
                raw = b"".join([*pieces, chunk[cut:nl]]) if pieces else chunk[cut:nl]
                pieces = []
                yield Line(offset=line_start, end=line_start + len(raw) + 1, raw=raw, row=parse_line(raw))
                line_start += len(raw) + 1
                cut = nl + 1
            if cut < len(chunk):
                pieces.append(chunk[cut:])


def iter_backward(path: Path, end: int, max_bytes: int) -> Iterator[Line]:
    """Complete lines ending at or before byte `end` (a line start: 0 or just after a
    newline), newest first, reading at most about `max_bytes`."""
    if end <= 0:
        return
    with open(path, "rb") as fh:
        line_end = end - 1  # the newline ending the line being assembled
        pos = line_end  # bytes [pos, line_end) are held in `pieces` (newest piece first)
        pieces: list[bytes] = []
        read = 0
        while pos > 0 and read <= max_bytes:
            size = min(CHUNK, pos)
            pos -= size
            fh.seek(pos)
            chunk = fh.read(size)
            read += size
            idx = len(chunk)
            while True:
                nl = chunk.rfind(b"\n", 0, idx)
                if nl < 0:
                    break
                raw = b"".join([chunk[nl + 1 : idx], *reversed(pieces)]) if pieces else chunk[nl + 1 : idx]
                pieces = []
                yield Line(offset=pos + nl + 1, end=line_end + 1, raw=raw, row=parse_line(raw))
                line_end = pos + nl
                idx = nl
            if idx > 0:
                pieces.append(chunk[:idx])
        if pos == 0:
            raw = b"".join(reversed(pieces))
            yield Line(offset=0, end=line_end + 1, raw=raw, row=parse_line(raw))


def read_line_at(path: Path, offset: int, length: int) -> dict[str, Any] | None:
    with open(path, "rb") as fh:
        return read_line_from(fh, offset, length)


def read_line_from(fh: BinaryIO, offset: int, length: int) -> dict[str, Any] | None:
    """The row of `length` bytes at `offset` of an open shard, or None when it is not a
    whole line there (the shard changed under the index entry)."""
    fh.seek(offset)
    data = fh.read(length)
    if not data.endswith(b"\n"):
        return None
    return parse_line(data[:-1])


def is_line_start(path: Path, offset: int) -> bool:
    if offset == 0:
        return True
    with open(path, "rb") as fh:
        fh.seek(offset - 1)
        return fh.read(1) == b"\n"
