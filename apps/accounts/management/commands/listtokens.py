from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.accounts.selectors import token_list


def _when(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "never"


class Command(BaseCommand):
    help = "List API tokens (name, prefix, role, created, last used, state) — never the secret."

    def add_arguments(self, parser):
        parser.add_argument("slug", nargs="?", help="only this profile's tokens")
        parser.add_argument("--active", action="store_true", help="leave revoked tokens out")

    def handle(self, *args, slug: str | None, active: bool, **options):
        if slug is not None and not Profile.objects.filter(slug=slug).exists():
            raise CommandError(f"no profile {slug!r}")
        rows = [
            (t.profile.slug, t.name, f"{t.prefix}…", t.role, _when(t.created_at), _when(t.last_used_at),
             "active" if t.is_active else f"revoked {_when(t.revoked_at)}")
            for t in token_list(profile_slug=slug, include_revoked=not active)
        ]
        if not rows:
            self.stdout.write("no tokens")
            return
        header = ("profile", "name", "prefix", "role", "created (UTC)", "last used (UTC)", "state")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            self.stdout.write("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
