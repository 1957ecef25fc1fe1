from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import ROLES, Profile
from apps.accounts.services import token_create


class Command(BaseCommand):
    help = "Create an API token for a profile. The plain token is printed once, as the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--role", choices=ROLES, required=True)
        parser.add_argument("--name", default="")

    def handle(self, *args, slug: str, role: str, name: str, **options):
        profile = Profile.objects.filter(slug=slug).first()
        if profile is None:
            raise CommandError(f"no profile {slug!r}; create it with createprofile")
        token, plain = token_create(profile=profile, role=role, name=name)
        self.stdout.write(f"token {token.prefix}… role={role} profile={slug} (shown once; only a hash is stored)")
        self.stdout.write(plain)
