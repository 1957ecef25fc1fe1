from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.accounts.services import profile_create


class Command(BaseCommand):
    help = "Create a memory profile (one user or agent identity)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--mode", choices=["code", "chat"], default="code")
        parser.add_argument("--name", default="")
        parser.add_argument("--if-missing", action="store_true", help="succeed quietly when it exists")

    def handle(self, *args, slug: str, mode: str, name: str, if_missing: bool, **options):
        existing = Profile.objects.filter(slug=slug).first()
        if existing is not None:
            if if_missing:
                self.stdout.write(f"profile {slug} exists (mode {existing.mode})")
                return
            raise CommandError(f"profile {slug!r} already exists")
        try:
            profile = profile_create(slug=slug, mode=mode, name=name)
        except Exception as exc:  # validation errors name the bad field
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"created profile {profile.slug} (mode {profile.mode})")
