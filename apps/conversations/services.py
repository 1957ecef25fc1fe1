"""L0 conversation shards and the skill feed: append, index, look up, read increments.

The JSONL shards under `profiles/<slug>/l0/` are the source of truth for L0. The
`L0Message` table only says where each row lives (shard, byte offset, line), so message
references resolve without scanning; content is always read from the shard.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Iterable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from django.db import DatabaseError, transaction

from apps.accounts.models import Profile
from apps.accounts.paths import own_file, own_files, profile_subdir
from apps.conversations import shards
from apps.conversations.models import L0Message, L0ShardState

logger = logging.getLogger(__name__)

ELIGIBLE_ROLES = frozenset({"user", "assistant"})
SHARD_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,250}\.jsonl$")
DATE_SHARD_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.jsonl$")
STATE_DIR = ".append-state"  # per-profile folder of shard line-count sidecars, beside l0/
MAX_OFFSET = 2**63 - 1  # a byte offset beyond this is no file's (and no bigint column's)
INGEST_LOCK = ".ingest.lock"  # in the L0 state folder: held for the duplicate check and the append


# ---------------------------------------------------------------- message references


def message_ref(row: dict[str, Any], *, line: int | None = None) -> str:
    """SPEC §1.1: the row's `id`; else `{sessionKey}#{sourceLine}`; else
    `{sessionKey}#{timestamp}`. `line` (the line number a reader knows) is the last resort
    for a row that has none of these; without it such a row raises ValueError."""
    row_id = row.get("id")
    if isinstance(row_id, str) and row_id != "":
        return row_id
    session_key = row.get("sessionKey")
    session_key = session_key if isinstance(session_key, str) else ""
    source_line = row.get("sourceLine")
    if isinstance(source_line, int) and not isinstance(source_line, bool):
        return f"{session_key}#{source_line}"
    timestamp = row.get("timestamp")
    if isinstance(timestamp, int) and not isinstance(timestamp, bool):
        return f"{session_key}#{timestamp}"
    if line is not None:
        return f"{session_key}#{line}"
    raise ValueError("row has no id, sourceLine or timestamp to build a message reference from")


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> datetime:
    """ISO 8601 → aware datetime (naive values are taken as UTC). Raises ValueError."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("not an ISO 8601 string")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def today_shard_name() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d") + ".jsonl"


def area_folder(profile: Profile, area: str) -> Path:
    """The profile's `area` folder (`l0`, `skill-feed`). When it is a link resolving outside
    the profile (say to another profile's folder), nothing is read or written through it:
    `forbidden`."""
    from apps.accounts.paths import PathOutsideProfile, confine, profile_dir
    from apps.tools.errors import Forbidden

    folder = profile_subdir(profile, area)
    try:
        confine(profile_dir(profile), area)
    except PathOutsideProfile:
        raise Forbidden(
            f"the profile's {area}/ folder is a link outside the profile; it is never followed",
            details=[{"field": area, "message": "symbolic link outside the profile"}],
        ) from None
    return folder


def l0_dir(profile: Profile) -> Path:
    return area_folder(profile, "l0")


def _state_dir(profile: Profile, area: str) -> Path:
    return area_folder(profile, f"{STATE_DIR}/{area}")


# ---------------------------------------------------------------- index


def _row_line(row: dict[str, Any], line: int) -> int:
    stored = row.get("sourceLine")
    if isinstance(stored, int) and not isinstance(stored, bool) and stored > 0:
        return stored
    return line


def _index_entry(profile: Profile, shard: str, offset: int, length: int, line: int, row: dict[str, Any]) -> L0Message | None:
    session_key = row.get("sessionKey")
    if not isinstance(session_key, str):
        session_key = ""
    try:
        ref = message_ref(row, line=line)
    except ValueError:
        return None
    if "\x00" in ref or "\x00" in session_key:
        return None  # PostgreSQL text cannot hold NUL; such a row stays readable, just not indexed
    timestamp = row.get("timestamp")
    role = row.get("role")
    return L0Message(
        profile=profile,
        ref=ref,
        ref_key=_sha1(ref),
        session_key=session_key,
        session_hash=_sha1(session_key),
        shard=shard,
        offset=offset,
        length=length,
        line=_row_line(row, line),
        role=role[:64] if isinstance(role, str) else "",
        timestamp=timestamp if isinstance(timestamp, int) and not isinstance(timestamp, bool) and abs(timestamp) < 2**62 else None,
    )


def _index_save(entries: Iterable[L0Message | None]) -> None:
    batch = [e for e in entries if e is not None]
    if batch:
        L0Message.objects.bulk_create(batch, ignore_conflicts=True, batch_size=500)


def _advance_state(profile: Profile, shard: str, start: int, end: int, lines_at_end: int) -> None:
    """Mark [start, end) indexed if the contiguous indexed prefix reaches `start`."""
    state, _ = L0ShardState.objects.get_or_create(profile=profile, shard=shard)
    if state.indexed_bytes >= end:
        return
    L0ShardState.objects.filter(pk=state.pk, indexed_bytes__gte=start, indexed_bytes__lt=end).update(
        indexed_bytes=end, indexed_lines=lines_at_end
    )


def _index_catch_up(profile: Profile, shard_path: Path) -> None:
    """Index every complete line after the contiguous indexed prefix (for shards that
    agents wrote or extended themselves)."""
    shard = shard_path.name
    state, _ = L0ShardState.objects.get_or_create(profile=profile, shard=shard)
    size = shard_path.stat().st_size
    if size <= state.indexed_bytes:
        return
    start, line = state.indexed_bytes, state.indexed_lines
    if not shards.is_line_start(shard_path, start):
        start, line = 0, 0  # the shard was rewritten under us: index it again from the top
    pending: list[L0Message | None] = []
    end = start
    for item in shards.iter_forward(shard_path, start):
        line += 1
        end = item.end
        if item.row is not None:
            pending.append(_index_entry(profile, shard, item.offset, item.end - item.offset, line, item.row))
        if len(pending) >= 2000:
            _index_save(pending)
            pending = []
    _index_save(pending)
    L0ShardState.objects.filter(pk=state.pk).update(indexed_bytes=end, indexed_lines=line)


def l0_shard_files(profile: Profile) -> list[Path]:
    """The profile's L0 shards in name order: regular files of its own `l0/` folder; a
    link (to another profile's shard, or anywhere) is not a shard (`own_files`)."""
    return [p for p in own_files(l0_dir(profile), "*.jsonl") if SHARD_NAME_RE.match(p.name)]


def _shard_file(profile: Profile, name: str) -> Path | None:
    return own_file(l0_dir(profile), name)


def l0_reindex(*, profile: Profile) -> int:
    """Bring the index up to date with every shard of the profile (after an import or a
    shard dropped into the folder). Cheap when nothing changed: one query and a stat per
    shard. Index rows of shards that are gone or are links (say an agent linked another
    profile's shard in, then removed the link) are deleted. Returns the number of shards
    that needed indexing."""
    states = dict(L0ShardState.objects.filter(profile=profile).values_list("shard", "indexed_bytes"))
    files = l0_shard_files(profile)
    gone = set(states) - {p.name for p in files}
    if gone:
        with transaction.atomic():
            L0Message.objects.filter(profile=profile, shard__in=gone).delete()
            L0ShardState.objects.filter(profile=profile, shard__in=gone).delete()
    caught_up = 0
    for path in files:
        if path.stat().st_size > states.get(path.name, 0):
            _index_catch_up(profile, path)
            caught_up += 1
    return caught_up


def l0_index_refresh(*, profile: Profile) -> None:
    """`l0_reindex` for readers of the index (the dashboard's conversation pages): new
    shards appear and rows of links or removed shards disappear before the page is built.
    A profile whose `l0/` folder is itself a link has no shards to index."""
    from apps.tools.errors import Forbidden

    try:
        l0_reindex(profile=profile)
    except Forbidden:
        L0Message.objects.filter(profile=profile).delete()
        L0ShardState.objects.filter(profile=profile).delete()


# ---------------------------------------------------------------- append


def _stored_by_key(profile: Profile, keys: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Where each (sessionKey, id) of `keys` is stored in the profile's shards (the first
    occurrence), read back from the shard so a stale index entry never counts."""
    if not keys:
        return {}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    ref_keys = sorted({_sha1(row_id) for _, row_id in keys})
    for start in range(0, len(ref_keys), 500):
        qs = L0Message.objects.filter(profile=profile, ref_key__in=ref_keys[start : start + 500]).order_by("shard", "offset")
        for entry, row in _materialise(profile, qs):
            key = (entry.session_key, row.get("id"))
            if key in keys and key not in found:
                found[key] = {
                    "shard": entry.shard, "offset": entry.offset, "sourceLine": entry.line,
                    "messageRef": entry.ref, "recordedAt": row.get("recordedAt"),
                }
    return found


def l0_append(*, profile: Profile, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append already validated rows to today's UTC shard, stamping `recordedAt` and
    `sourceLine`. Returns one entry per input row, `{shard, offset, sourceLine,
    messageRef, recordedAt, duplicate}`.

    Idempotent per (sessionKey, id) (SPEC §1.1): a row whose id is already stored for its
    session, in any shard, or earlier in this batch, is not written again; its entry has
    `duplicate: True` and points at the stored row. Rows with a null id cannot be
    recognised and are always appended. The check and the append hold one profile-wide
    lock (and the index of the new rows is written before it is released), so two
    senders of the same batch at the same moment store every row once."""
    if not rows:
        return []
    shard = today_shard_name()
    path = l0_dir(profile) / shard
    state_dir = _state_dir(profile, "l0")

    def stamp(row: dict[str, Any], line: int) -> dict[str, Any]:
        stored = {k: v for k, v in row.items() if k not in ("recordedAt", "sourceLine")}
        stored["recordedAt"] = now_iso()
        stored["sourceLine"] = line
        return stored

    with shards.exclusive_lock(state_dir / INGEST_LOCK):
        # Rows other writers (or agents writing shards directly) stored since the index was
        # last brought up to date are indexed first, so the check sees every stored row.
        l0_reindex(profile=profile)
        keys = {(r["sessionKey"], r["id"]) for r in rows if r.get("id") is not None}
        stored = _stored_by_key(profile, keys)
        fresh: list[dict[str, Any]] = []
        first_in_batch: dict[tuple[str, str], int] = {}
        plan: list[tuple[str, Any]] = []  # ("stored", info) | ("fresh", position) | ("repeat", position)
        for row in rows:
            key = (row["sessionKey"], row["id"]) if row.get("id") is not None else None
            if key is not None and key in stored:
                plan.append(("stored", stored[key]))
            elif key is not None and key in first_in_batch:
                plan.append(("repeat", first_in_batch[key]))
            else:
                if key is not None:
                    first_in_batch[key] = len(fresh)
                plan.append(("fresh", len(fresh)))
                fresh.append(row)
        appended = shards.append_rows(path, state_dir, fresh, stamp) if fresh else []
        if appended:
            _index_appended(profile, shard, appended)
    written = [
        {"shard": shard, "offset": a.offset, "sourceLine": a.line, "messageRef": message_ref(a.row), "recordedAt": a.row["recordedAt"]}
        for a in appended
    ]
    out = []
    for kind, value in plan:
        if kind == "stored":
            out.append({**value, "duplicate": True})
        else:
            out.append({**written[value], "duplicate": kind == "repeat"})
    return out


def _index_appended(profile: Profile, shard: str, appended: list[shards.Appended]) -> None:
    # The file is the source of truth and the rows are stored now. The index is derived
    # state: if writing it fails, the catch-up (`l0_reindex`, run by lookups, readers and
    # the next append) indexes these rows later, so the failure must not reach the
    # caller — an error here would make a logger retry a batch that is already stored.
    last = appended[-1]
    try:
        with transaction.atomic():
            _index_save(_index_entry(profile, shard, a.offset, a.length, a.line, a.row) for a in appended)
            _advance_state(profile, shard, appended[0].offset, last.offset + last.length, last.line)
    except DatabaseError:
        logger.warning("L0 index of %s/%s deferred to the catch-up", profile.slug, shard, exc_info=True)


# ---------------------------------------------------------------- lookup


def l0_read_row(*, profile: Profile, shard: str, offset: int, length: int) -> dict[str, Any] | None:
    """The row an index entry points at, or None when it cannot be read: the shard is
    gone, is a link (never read through: `own_file`), or changed under the entry."""
    path = _shard_file(profile, shard)
    if path is None:
        return None
    try:
        return shards.read_line_at(path, offset, length)
    except OSError:
        return None


def _materialise(profile: Profile, entries: Iterable[L0Message]) -> list[tuple[L0Message, dict[str, Any]]]:
    """The rows the entries point at, those that still match their entry. The folder check
    (`l0_dir`) and each shard's `own_file` check are made once per call, and each shard is
    opened once: a session's rows are read in one pass, not one open per row."""
    out = []
    folder: Path | None = None
    handles: dict[str, BinaryIO | None] = {}
    with ExitStack() as stack:
        for entry in entries:
            if folder is None:
                folder = l0_dir(profile)
            if entry.shard not in handles:
                path = own_file(folder, entry.shard)
                try:
                    handles[entry.shard] = stack.enter_context(open(path, "rb")) if path is not None else None
                except OSError:
                    handles[entry.shard] = None
            fh = handles[entry.shard]
            try:
                row = shards.read_line_from(fh, entry.offset, entry.length) if fh is not None else None
            except OSError:
                row = None
            if row is None:
                continue  # shard removed or rewritten: the index entry is stale
            try:
                if message_ref(row, line=entry.line) != entry.ref:
                    continue
            except ValueError:
                continue
            out.append((entry, row))
    return out


def _full_row(entry: L0Message, row: dict[str, Any]) -> dict[str, Any]:
    full = dict(row)
    full.setdefault("sessionKey", entry.session_key)
    full.setdefault("cwd", "")
    full.setdefault("content", "")
    full["sourceFile"] = entry.shard
    full["sourceOffset"] = entry.offset
    full["sourceLine"] = entry.line
    full["messageRef"] = entry.ref
    return full


def l0_lookup_messages(
    *, profile: Profile, refs: list[str], session_key: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The L0 rows of each message reference found (a reference can match rows of several
    sessions, hence a list; `session_key` narrows it). References not found are absent."""
    wanted = {ref for ref in refs if isinstance(ref, str) and ref}
    if not wanted:
        return {}

    def query() -> dict[str, list[dict[str, Any]]]:
        qs = L0Message.objects.filter(profile=profile, ref_key__in=[_sha1(r) for r in wanted])
        if session_key is not None:
            qs = qs.filter(session_hash=_sha1(session_key))
        qs = qs.order_by("shard", "offset")
        found: dict[str, list[dict[str, Any]]] = {}
        for entry, row in _materialise(profile, qs):
            if entry.ref in wanted and (session_key is None or entry.session_key == session_key):
                found.setdefault(entry.ref, []).append(_full_row(entry, row))
        return found

    found = query()
    if len(found) < len(wanted):
        # Rows an agent wrote into a shard directly are indexed only once read; catch up.
        l0_reindex(profile=profile)
        found = query()
    return found


def l0_session_rows(*, profile: Profile, session_key: str) -> list[dict[str, Any]]:
    """Every row of one session in shard/line order, content included (shards written
    directly into the folder are indexed first)."""
    l0_reindex(profile=profile)
    qs = L0Message.objects.filter(profile=profile, session_hash=_sha1(session_key)).order_by("shard", "offset")
    return [_full_row(e, r) for e, r in _materialise(profile, qs) if e.session_key == session_key]


# ---------------------------------------------------------------- cursors


def _check_shard_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not SHARD_NAME_RE.match(name) or ".." in name:
        raise ValueError(f"{where}: {name!r} is not a shard file name (YYYY-MM-DD.jsonl, no path)")
    return name


def cursor_json_load(text: str) -> Any:
    """Parse a serialized cursor; any failure is a ValueError naming the problem."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"cursor is not valid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise ValueError("cursor nests too deeply to be a cursor") from None


def l0_cursor_parse(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Validate an L0 cursor (SPEC §3.7) and return it normalised:
    `{}` (from the start), `{"version": 2, "files": {shard: offset}}` or
    `{"lastRecordedAt": ISO}`. Raises ValueError naming the problem."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        value = cursor_json_load(raw)
    else:
        value = raw
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"cursor must be a JSON object, got {type(value).__name__}")  # noqa: TRY004 (callers catch ValueError: one error type for any bad cursor)
    if not value:
        return {}
    keys = set(value)
    if "lastRecordedAt" in keys:
        if keys != {"lastRecordedAt"}:
            raise ValueError(f"legacy cursor takes only lastRecordedAt; unknown keys: {', '.join(sorted(keys - {'lastRecordedAt'}))}")
        stamp = value["lastRecordedAt"]
        try:
            parse_iso(stamp)
        except (ValueError, TypeError):
            raise ValueError(f"cursor.lastRecordedAt: {stamp!r} is not an ISO 8601 timestamp") from None
        return {"lastRecordedAt": stamp.strip()}
    unknown = keys - {"version", "files"}
    if unknown:
        raise ValueError(f"cursor has unknown keys: {', '.join(sorted(unknown))} (expected version and files)")
    version = value.get("version")
    if version != 2 or isinstance(version, bool):
        raise ValueError(f"cursor.version must be 2, got {version!r}")
    files = value.get("files")
    if files is None:
        raise ValueError("cursor.files is required (an object of shard name to byte offset)")
    if not isinstance(files, dict):
        raise ValueError("cursor.files must be an object of shard name to byte offset")  # noqa: TRY004 (callers catch ValueError: one error type for any bad cursor)
    out: dict[str, int] = {}
    for name, offset in files.items():
        _check_shard_name(name, "cursor.files")
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise ValueError(f"cursor.files[{name!r}]: offset must be an integer, got {offset!r}")  # noqa: TRY004 (callers catch ValueError: one error type for any bad cursor)
        if offset < 0:
            raise ValueError(f"cursor.files[{name!r}]: offset must not be negative, got {offset}")
        if offset > MAX_OFFSET:
            raise ValueError(f"cursor.files[{name!r}]: offset {offset} is beyond any file size (at most {MAX_OFFSET})")
        out[name] = offset
    return {"version": 2, "files": dict(sorted(out.items()))}


# ---------------------------------------------------------------- reading increments


BACKGROUND_MAX_BYTES = 1024 * 1024  # background is context only: never read more than this


def resolve_shards(profile: Profile, area: str, spec: str, field: str) -> list[Path]:
    """Comma-separated shard names or paths → existing shard files of the profile's `area`
    folder, deduplicated, in name order. Anything resolving elsewhere is `forbidden`."""
    from apps.accounts.paths import PathOutsideProfile, confine
    from apps.tools.errors import Forbidden, NotFound, invalid_field

    if not isinstance(spec, str):
        raise invalid_field(field, "must be a comma-separated string of shard names")
    names = [part.strip() for part in spec.split(",") if part.strip()]
    if not names:
        raise invalid_field(field, "names no shard")
    base = area_folder(profile, area).resolve()
    found: dict[str, Path] = {}
    for name in names:
        if "\x00" in name:
            raise invalid_field(field, f"{name!r} contains a NUL character; give shard names such as 2026-01-05.jsonl")
        try:
            resolved = confine(base, name)
        except PathOutsideProfile:
            raise Forbidden(f"{field}: {name!r} is outside this profile's {area} folder", details=[{"field": field, "value": name}]) from None
        if resolved.parent != base or not SHARD_NAME_RE.match(resolved.name):
            raise NotFound(f"{field}: {name!r} is not a shard of this profile's {area} folder", details=[{"field": field, "value": name}])
        if not resolved.is_file():
            raise NotFound(f"{field}: shard {resolved.name!r} does not exist", details=[{"field": field, "value": name}])
        found[resolved.name] = resolved
    return [found[name] for name in sorted(found)]


def _lines_before(profile: Profile, shard: str, path: Path, offset: int) -> int:
    """How many lines precede byte `offset` (a line start), using the index to avoid
    counting from the top of a big shard."""
    if offset == 0:
        return 0
    state = L0ShardState.objects.filter(profile=profile, shard=shard).first()
    if state is not None and state.indexed_bytes == offset:
        return state.indexed_lines
    prev = L0Message.objects.filter(profile=profile, shard=shard, offset__lt=offset).order_by("-offset").first()
    start, lines = 0, 0
    if prev is not None:
        start, lines = prev.offset + prev.length, prev.line
    if state is not None and start < state.indexed_bytes <= offset:
        start, lines = state.indexed_bytes, state.indexed_lines
    with open(path, "rb") as fh:
        fd = fh.fileno()
        return lines + shards._count_newlines(fd, start, offset)


def _has_complete_line(path: Path, start: int) -> bool:
    with open(path, "rb") as fh:
        fh.seek(start)
        while True:
            chunk = fh.read(shards.CHUNK)
            if not chunk:
                return False
            if b"\n" in chunk:
                return True


def _is_eligible(row: dict[str, Any]) -> bool:
    return row.get("role") in ELIGIBLE_ROLES


def _before_legacy(row: dict[str, Any], boundary: datetime) -> bool:
    # A row whose recordedAt is missing or unreadable is replayed rather than lost.
    stamp = row.get("recordedAt")
    try:
        return parse_iso(stamp) < boundary
    except (ValueError, TypeError):
        return False


def _message(shard: str, item: shards.Line, line: int) -> dict[str, Any]:
    assert item.row is not None
    out = dict(item.row)
    out["sourceFile"] = shard
    out["sourceOffset"] = item.offset
    out["sourceLine"] = _row_line(item.row, line)
    out["messageRef"] = message_ref(item.row, line=line)
    return out


def _needs_line(row: dict[str, Any]) -> bool:
    return _row_line(row, 0) == 0


class _ShardScan:
    """Forward scan of one shard with line numbers resolved only when a row needs them."""

    def __init__(self, profile: Profile, path: Path, start: int):
        self.profile, self.path, self.name, self.start = profile, path, path.name, start
        self._before: int | None = None
        self.rel = 0
        self.pos = start
        self.entries: list[L0Message | None] = []

    def line_of(self, rel: int) -> int:
        if self._before is None:
            self._before = _lines_before(self.profile, self.name, self.path, self.start)
        return self._before + rel


def _index_scanned(profile: Profile, scans: list[_ShardScan]) -> None:
    with transaction.atomic():
        for scan in scans:
            _index_save(scan.entries)
            if scan.pos <= scan.start:
                continue
            state = L0ShardState.objects.filter(profile=profile, shard=scan.name).first()
            if state is None and scan.start == 0:
                L0ShardState.objects.get_or_create(profile=profile, shard=scan.name)
                state = L0ShardState.objects.get(profile=profile, shard=scan.name)
            if state is None or state.indexed_bytes != scan.start:
                continue  # not contiguous with the indexed prefix; catch-up covers it later
            L0ShardState.objects.filter(pk=state.pk, indexed_bytes=scan.start).update(
                indexed_bytes=scan.pos, indexed_lines=state.indexed_lines + scan.rel
            )


def _background_v2(profile: Profile, paths: list[Path], offsets: dict[str, int], size: int) -> list[dict[str, Any]]:
    """The `size` most recent eligible rows before the cursor position, oldest first."""
    found: list[dict[str, Any]] = []
    budget = BACKGROUND_MAX_BYTES
    for path in reversed(paths):
        end = offsets.get(path.name, 0)
        if end <= 0 or len(found) >= size or budget <= 0:
            continue
        for item in shards.iter_backward(path, end, budget):
            budget -= item.end - item.offset
            if item.row is not None and _is_eligible(item.row):
                line = _row_line(item.row, 0) or _lines_before(profile, path.name, path, item.offset) + 1
                found.append(_message(path.name, item, line))
                if len(found) >= size:
                    break
            if budget <= 0:
                break
    found.reverse()
    return found


def l0_cursor_check(*, profile: Profile, cursor: dict[str, Any]) -> None:
    """Check a parsed v2 cursor against this profile's shards before it is committed: the
    offset of each existing shard must be at a line start within it. The committed cursor
    only moves forward (merged per shard by maximum), so an offset past the end or in the
    middle of a line, once committed, would make every later read of that shard fail.
    Entries for shards that do not exist (yet) are not checked. Raises ValueError."""
    for name, offset in sorted(cursor.get("files", {}).items()):
        path = _shard_file(profile, name)
        if path is None:
            continue
        size = path.stat().st_size
        if offset > size:
            raise ValueError(f"offset {offset} of {name} is beyond the end of the shard ({size} bytes)")
        if not shards.is_line_start(path, offset):
            raise ValueError(f"offset {offset} of {name} is not at the start of a line")


def l0_read_increment(
    *,
    profile: Profile,
    l0_files: str,
    cursor: dict[str, Any],
    batch_size: int | None = None,
    background_size: int | None = None,
) -> dict[str, Any]:
    """SPEC §3.7. `cursor` is a parsed cursor (`l0_cursor_parse`). Returns
    `{messages, background, nextCursor, truncated, skippedLines}`."""
    from apps.accounts.config import profile_setting
    from apps.tools.errors import invalid_field

    batch = int(batch_size if batch_size is not None else profile_setting(profile, "l0.batchSize"))
    bg_size = int(background_size if background_size is not None else profile_setting(profile, "l0.backgroundSize"))
    paths = resolve_shards(profile, "l0", l0_files, "l0Files")
    legacy = parse_iso(cursor["lastRecordedAt"]) if "lastRecordedAt" in cursor else None
    offsets: dict[str, int] = {} if legacy is not None else dict(cursor.get("files", {}))

    for path in paths:  # validate every offset before touching anything
        start, size = offsets.get(path.name, 0), path.stat().st_size
        if start > size:
            raise invalid_field("cursor", f"offset {start} of {path.name} is beyond the end of the shard ({size} bytes)")
        if not shards.is_line_start(path, start):
            raise invalid_field("cursor", f"offset {start} of {path.name} is not at the start of a line")

    messages: list[dict[str, Any]] = []
    legacy_background: list[dict[str, Any]] = []
    skipped = 0
    scans: list[_ShardScan] = []
    full = False
    truncated = False
    next_files = dict(offsets)
    for path in paths:
        start = offsets.get(path.name, 0)
        if full:
            truncated = truncated or _has_complete_line(path, start)
            continue
        scan = _ShardScan(profile, path, start)
        scans.append(scan)
        for item in shards.iter_forward(path, start):
            scan.rel += 1
            scan.pos = item.end
            rel = scan.rel
            if item.row is None:
                skipped += 1
                continue
            line = scan.line_of(rel) if _needs_line(item.row) else _row_line(item.row, 0)
            scan.entries.append(_index_entry(profile, path.name, item.offset, item.end - item.offset, line, item.row))
            if not _is_eligible(item.row):
                continue
            if legacy is not None and _before_legacy(item.row, legacy):
                if bg_size:
                    legacy_background.append(_message(path.name, item, line))
                    del legacy_background[:-bg_size]
                continue
            messages.append(_message(path.name, item, line))
            if len(messages) >= batch:
                full = True
                break
        if scan.pos > start or path.name in next_files:
            next_files[path.name] = scan.pos
        if full:
            truncated = _has_complete_line(path, scan.pos)

    _index_scanned(profile, scans)
    if legacy is not None:
        background = legacy_background
    else:
        background = _background_v2(profile, paths, offsets, bg_size) if bg_size else []
    return {
        "messages": messages,
        "background": background,
        "nextCursor": {"version": 2, "files": dict(sorted(next_files.items()))},
        "truncated": truncated,
        "skippedLines": skipped,
    }
