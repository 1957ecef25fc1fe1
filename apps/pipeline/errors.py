"""The pipeline's own exception, in a module of its own so the job runner, the drivers
and scheduling can all raise it without importing each other."""

from __future__ import annotations


class JobFailed(Exception):
    """A run cannot complete; the message is stored as the run's error."""
