"""`manage.py memory backup <dir>`: a consistent copy of a running service.

Order matters. The database is copied first — SQLite through its online backup API (a
consistent snapshot while writers go on), PostgreSQL with `pg_dump` (one transaction
snapshot). Then each profile's files: L0 and skill-feed shards are append-only, so a
copy taken after the snapshot holds every row the snapshot's cursors and records point
at (copied through the last complete line); skills are copied under the profile's skill
lock. The search index is left out: it is derived and rebuilt after a restore with
`manage.py reindex` (docs/transfer.md, README "Backup and restore").
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

from django.conf import settings
from django.db import connection

from apps.accounts.models import Profile
from apps.accounts.paths import profile_dir
from apps.conversations.services import SHARD_NAME_RE
from apps.conversations.transfer import shard_committed_bytes
from apps.skills.storage import skills_lock

SQLITE_FILE = "memoryweb.sqlite3"
PG_FILE = "memoryweb.pgdump"
SHARD_AREAS = ("l0", "skill-feed")
SKIP_NAMES = (".skills.lock",)


def service_backup(*, dest: Path, progress=None) -> list[str]:
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise ValueError(f"{dest} exists and is not an empty directory; back up into a new one")
    dest.mkdir(parents=True, exist_ok=True)
    report = [_database(dest)]
    profiles = list(Profile.objects.order_by("slug"))
    bar = progress("files", len(profiles)) if progress else None
    copied = 0
    for profile in profiles:
        copied += _profile_files(profile, dest / "data" / "profiles" / profile.slug)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    report.append(f"files: {copied} from {len(profiles)} profiles into {dest / 'data'}")
    report.append("index: not copied (derived); after a restore run `python manage.py reindex`")
    return report


def _database(dest: Path) -> str:
    db = settings.DATABASES["default"]
    if connection.vendor == "sqlite":
        target = sqlite3.connect(dest / SQLITE_FILE)
        try:
            connection.ensure_connection()
            # Django's own connection: the same database file (or, under the tests, the
            # same in-memory database); the backup API copies a consistent snapshot.
            connection.connection.backup(target)
        finally:
            target.close()
        return f"database: SQLite online backup into {dest / SQLITE_FILE}"
    if connection.vendor == "postgresql":
        pg_dump = shutil.which("pg_dump")
        if pg_dump is None:
            raise ValueError(
                "pg_dump is not installed (Debian: apt install postgresql-client). Without it, take the database first "
                f"with `pg_dump --format=custom --file {dest / PG_FILE} \"$DATABASE_URL\"`, then run this command again "
                "into an empty directory to copy the files"
            )
        env = {"PGPASSWORD": str(db.get("PASSWORD") or "")}
        args = [pg_dump, "--format=custom", "--no-owner", "--file", str(dest / PG_FILE),
                "--host", str(db.get("HOST") or "localhost"), "--port", str(db.get("PORT") or 5432),
                "--username", str(db.get("USER") or "postgres"), str(db["NAME"])]
        subprocess.run(args, check=True, env={**_base_env(), **env}, capture_output=True, timeout=3600)
        return f"database: pg_dump (custom format) into {dest / PG_FILE}; restore with pg_restore"
    raise ValueError(f"no backup method for the {connection.vendor} database")


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PGSSLMODE")}


def _profile_files(profile: Profile, target: Path) -> int:
    source = profile_dir(profile)
    if not source.is_dir():
        return 0
    copied = 0
    with skills_lock(profile):
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            if path.is_symlink() or any(p.is_symlink() for p in path.parents if source in p.parents):
                continue  # links are never followed (they may point at another profile)
            if not path.is_file() or path.name in SKIP_NAMES:
                continue
            out = target / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            if relative.parts[0] in SHARD_AREAS and len(relative.parts) == 2 and SHARD_NAME_RE.match(path.name):
                out.write_bytes(shard_committed_bytes(path))
            else:
                shutil.copy2(path, out)
            copied += 1
    return copied
