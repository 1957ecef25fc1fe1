"""Concurrent skill writers of one profile: serialised, none lost, every change audited."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from apps.accounts.models import AuditEvent
from apps.accounts.services import profile_create
from apps.skills import services
from tests.skills.helpers import skill_md

WRITERS = 6


@pytest.mark.django_db(transaction=True)
def test_parallel_writers_all_land_and_are_all_audited():
    profile = profile_create(slug="busy")
    services.skill_create(profile=profile, actor="t", name="deploy", category="devops", content=skill_md("deploy"))
    errors: list[BaseException] = []
    barrier = threading.Barrier(WRITERS)

    def writer(index: int) -> None:
        try:
            barrier.wait(5)
            services.skill_write_file(
                profile=profile, actor=f"writer-{index}", name="deploy", file_path=f"references/{index}.md", file_content=str(index)
            )
            services.skill_patch(
                profile=profile, actor=f"writer-{index}", name="deploy", old_string="1. run it\n", new_string=f"1. run it\n- note {index}\n"
            )
        except BaseException as exc:  # noqa: BLE001 — collected in the thread, asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    view = services.skill_view(profile=profile, name="deploy")
    assert view["files"] == sorted(f"references/{i}.md" for i in range(WRITERS))
    assert all(f"- note {i}\n" in view["content"] for i in range(WRITERS))
    actions = list(AuditEvent.objects.filter(profile=profile, target_type="skill").values_list("action", flat=True))
    assert sorted(actions) == sorted(["create"] + ["write_file"] * WRITERS + ["patch"] * WRITERS)
