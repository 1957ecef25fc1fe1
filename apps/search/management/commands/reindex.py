"""`manage.py reindex [profile ...]`: rebuild the index from the database without an
empty-recall window (new collection, then an alias switch)."""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.records.models import L1Record
from apps.search import embedding, index


class Command(BaseCommand):
    help = "Rebuild the search index of one or more profiles (all when none is named) from the database."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("profiles", nargs="*", help="profile slugs (default: every profile)")

    def handle(self, *args: str, profiles: list[str], **options: Any) -> None:
        from tqdm import tqdm

        if profiles:
            found = {p.slug: p for p in Profile.objects.filter(slug__in=profiles)}
            missing = [s for s in profiles if s not in found]
            if missing:
                raise CommandError(f"unknown profile(s): {', '.join(missing)}")
            targets = [found[s] for s in profiles]
        else:
            targets = list(Profile.objects.order_by("slug"))
        try:
            index.store()
            embedding.get_model()
        except index.IndexUnavailable as exc:
            raise CommandError(str(exc)) from exc
        except embedding.EmbeddingUnavailable as exc:
            raise CommandError(str(exc)) from exc
        try:
            for profile in targets:
                total = L1Record.objects.filter(profile=profile, deleted=False).count()
                with tqdm(total=total, desc=f"reindex {profile.slug}", unit="rec", file=sys.stderr) as bar:
                    result = index.reindex_profile(profile, progress=bar.update)
                index.drain_outbox(profile.pk)
                self.stdout.write(
                    f"{profile.slug}: {result['records']} records into {result['collection']}"
                    + (f" (replaced {result['replaced']})" if result["replaced"] else "")
                )
        except (index.IndexUnavailable, embedding.EmbeddingUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        finally:
            index.close_clients()
