import os
from getpass import getpass

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.dashboard.services import access_grant, person_create


class Command(BaseCommand):
    help = ("Create a person who can log in to the dashboard, and grant access to profiles. "
            "The password comes from MEMORYWEB_PASSWORD or is asked for.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--profile", action="append", default=[], help="profile slug to grant (repeatable)")
        parser.add_argument("--admin", action="store_true", help="admin of the granted profiles (force fixes, tokens, people)")
        parser.add_argument("--superuser", action="store_true", help="sees every profile")
        parser.add_argument("--email", default="")
        parser.add_argument("--if-exists-grant", action="store_true", help="grant access when the person already exists")

    def handle(self, *args, username, profile, admin, superuser, email, if_exists_grant, **options):
        profiles = []
        for slug in profile:
            found = Profile.objects.filter(slug=slug).first()
            if found is None:
                raise CommandError(f"no profile {slug!r}; create it with createprofile")
            profiles.append(found)
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is not None and not if_exists_grant:
            raise CommandError(f"a person named {username!r} already exists (use --if-exists-grant to add access)")
        if user is None:
            password = os.environ.get("MEMORYWEB_PASSWORD") or ""
            if not password:
                password = getpass(f"Password for {username}: ")
                if password != getpass("Again: "):
                    raise CommandError("the passwords differ")
            try:
                user = person_create(username=username, password=password, email=email)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"created person {username}")
        if superuser and not user.is_superuser:
            user.is_superuser = True
            user.is_staff = True
            user.save(update_fields=["is_superuser", "is_staff"])
            self.stdout.write(f"{username} is a superuser (sees every profile)")
        for p in profiles:
            access_grant(profile=p, user=user, is_admin=admin, actor="manage.py createuser")
            self.stdout.write(f"granted {username} {'admin ' if admin else ''}access to {p.slug}")
