from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import ROLES, Profile
from apps.accounts.services import token_create


class Command(BaseCommand):
    help = "Create a named API token for a profile. The plain token is printed once, as the last line."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--role", choices=ROLES, required=True)
        parser.add_argument("--name", required=True, help="what the token is for, e.g. laptop-claude (unique in the profile; the audit log shows it)")

    def handle(self, *args, slug: str, role: str, name: str, **options):
        profile = Profile.objects.filter(slug=slug).first()
        if profile is None:
            raise CommandError(f"no profile {slug!r}; create it with createprofile")
        try:
            token, plain = token_create(profile=profile, role=role, name=name)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"token {token.name!r} ({token.prefix}…) role={role} profile={slug} (shown once; only a hash is stored)"
        )
        self.stdout.write(plain)
