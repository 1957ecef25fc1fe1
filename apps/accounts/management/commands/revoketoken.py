from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.accounts.selectors import token_matches
from apps.accounts.services import token_revoke


class Command(BaseCommand):
    help = "Revoke an API token by its name or its shown prefix (mw_…). Audited on the token's profile."

    def add_arguments(self, parser):
        parser.add_argument("ref", help="the token's name, or the start of its prefix (at least mw_ + 3 characters)")
        parser.add_argument("--profile", help="look only in this profile (names are unique per profile)")

    def handle(self, *args, ref: str, profile: str | None, **options):
        if profile is not None and not Profile.objects.filter(slug=profile).exists():
            raise CommandError(f"no profile {profile!r}")
        matches = token_matches(ref=ref, profile_slug=profile)
        if not matches:
            raise CommandError(f"no active token named {ref!r} or with that prefix (see manage.py listtokens)")
        if len(matches) > 1:
            listed = ", ".join(f"{t.profile.slug}/{t.name} ({t.prefix}…)" for t in matches)
            raise CommandError(f"{ref!r} matches {len(matches)} tokens: {listed}; give --profile or a longer prefix")
        token = matches[0]
        token_revoke(token=token, actor="manage.py revoketoken")
        self.stdout.write(f"revoked token {token.name!r} ({token.prefix}…) of profile {token.profile.slug}")
