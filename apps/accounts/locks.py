"""The per-profile write lock (SPEC §2 `locked`, §6 `l1.writeLockTimeoutSeconds`).

Writers of one profile serialise on its Profile row. On PostgreSQL that is a row lock
with a lock timeout; on SQLite every write transaction already takes the database write
lock at BEGIN (transaction_mode=IMMEDIATE) and waits up to the connection timeout.
Either way a writer that waits longer than the timeout gets `ProfileLocked`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import OperationalError, connection, transaction

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile


class ProfileLocked(Exception):
    pass


_LOCK_ERRORS = ("database is locked", "database table is locked", "lock timeout", "canceling statement due to lock timeout", "could not obtain lock")


def is_lock_error(exc: BaseException) -> bool:
    """A lock that stayed busy (either database), as opposed to any other failure."""
    text = str(exc).lower()
    return any(fragment in text for fragment in _LOCK_ERRORS)


@contextmanager
def profile_write_lock(profile: Profile) -> Iterator[None]:
    """One atomic transaction holding the profile's write lock."""
    timeout = int(profile_setting(profile, "l1.writeLockTimeoutSeconds"))
    if connection.vendor == "sqlite" and not connection.in_atomic_block:
        # The write lock is taken at BEGIN IMMEDIATE; its wait is the busy timeout,
        # so set this profile's value on the connection before the transaction opens.
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {timeout * 1000}")
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = %s", [f"{timeout}s"])
                list(Profile.objects.select_for_update().filter(pk=profile.pk).values_list("pk", flat=True))
            yield
    except OperationalError as exc:
        if is_lock_error(exc):
            raise ProfileLocked(f"the profile's write lock stayed busy for {timeout} s; retry") from exc
        raise
