"""Pipeline fixtures: a private embedded index per test, L0/feed writers, a recorder of
enqueued job messages, and a job-run helper that executes a run in this process."""

from __future__ import annotations

import pytest

from apps.pipeline import tasks
from apps.search import index


@pytest.fixture(autouse=True)
def _private_index(settings, tmp_path):
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.QDRANT_EDGE_PATH = str(tmp_path / "index-edge")
    settings.QDRANT_URL = ""
    settings.LLM_BASE_URL = ""
    settings.LLM_MODEL = ""
    index.close_clients()
    yield
    index.close_clients()


class SentMessages:
    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.fail: Exception | None = None

    def apply_async(self, args=None, kwargs=None, **options):
        if self.fail is not None:
            raise self.fail
        self.calls.append({"args": list(args or []), **options})

        class _Result:
            id = f"task-{len(self.calls)}"

        return _Result()

    @property
    def run_ids(self) -> list[int]:
        return [c["args"][0] for c in self.calls]


@pytest.fixture
def sent(monkeypatch) -> SentMessages:
    """Captures run_job messages instead of sending them to a broker."""
    recorder = SentMessages()
    monkeypatch.setattr(tasks.run_job, "apply_async", recorder.apply_async)
    rechecks = SentMessages()
    monkeypatch.setattr(tasks.check_trigger, "apply_async", rechecks.apply_async)
    recorder.rechecks = rechecks
    return recorder


@pytest.fixture
def l0(db):
    """Append L0 rows to a profile's shard through the conversations service."""
    from apps.conversations.services import l0_append

    def append(profile, rows):
        return l0_append(profile=profile, rows=rows)

    return append


def msg(mid, content, *, role="user", session="s1", ts=1764400000000, cwd="/home/dev/proj"):
    return {"id": mid, "role": role, "content": content, "timestamp": ts, "sessionKey": session, "sessionId": "sid-" + session, "cwd": cwd}


# Helpers of the rules-driver tests (imported like `msg`).
def live_records(profile) -> list:
    """The profile's live records, oldest first."""
    from apps.records.models import L1Record

    return list(L1Record.objects.filter(profile=profile, deleted=False).order_by("created_at", "id"))


def live_texts(profile) -> list[str]:
    return [r.content for r in live_records(profile)]


def ok(run):
    """The run, which must have succeeded (its error is the failure message)."""
    from apps.pipeline.models import STATUS_SUCCEEDED

    assert run.status == STATUS_SUCCEEDED, run.error
    return run


def code_profile(make_profile, slug: str, project: str):
    """A code-mode profile that knows `project`."""
    profile = make_profile(slug, "code")
    profile.known_projects = [project]
    profile.save()
    return profile


@pytest.fixture
def chat(make_profile):
    """A chat-mode profile."""
    return make_profile("friend", "chat")


@pytest.fixture
def run_now(db):
    """Create a run of `kind` and execute it here, returning the finished run."""
    from apps.pipeline import jobs, scheduling

    def run(profile, kind, reason="test"):
        job = scheduling.request_run(profile=profile, kind=kind, reason=reason, send=False)
        assert job is not None, f"{kind} already active"
        done = jobs.execute_run(run_id=job.pk)
        assert done is not None
        return done

    return run


def assert_rewrites(record: str, said: str, expected: str) -> None:
    """`said` parses as a correction that supersedes `record` and rewrites it to `expected`."""
    from apps.pipeline.rules.corrections import corrected_content, parse_correction, supersedes

    correction = parse_correction(said)
    assert correction is not None, said
    assert supersedes(record, correction) > 0, (record, said)
    assert corrected_content(record, correction) == expected
