"""People and their access to profiles: the dashboard's own writes (ProfileAccess is the
dashboard's concept). Each change is audited on the profile it concerns."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from apps.accounts.models import ApiToken, Profile, ProfileAccess
from apps.accounts.services import audit_record, token_create, token_revoke


def person_create(*, username: str, password: str, email: str = "") -> object:
    User = get_user_model()
    if not username or not username.strip():
        raise ValueError("username must not be empty")
    if User.objects.filter(username=username).exists():
        raise ValueError(f"a person named {username!r} already exists")
    try:
        # The same validators as the Django admin (settings.AUTH_PASSWORD_VALIDATORS).
        validate_password(password or "", user=User(username=username, email=email))
    except ValidationError as exc:
        raise ValueError("the password is refused: " + " ".join(exc.messages)) from None
    return User.objects.create_user(username=username, password=password, email=email)


def access_grant(*, profile: Profile, user, is_admin: bool, actor: str) -> ProfileAccess:
    with transaction.atomic():
        access, created = ProfileAccess.objects.get_or_create(user=user, profile=profile, defaults={"is_admin": is_admin})
        before = None if created else {"user": user.get_username(), "is_admin": access.is_admin}
        if not created and access.is_admin != is_admin:
            access.is_admin = is_admin
            access.save(update_fields=["is_admin"])
        audit_record(profile=profile, actor=actor, tool="dashboard", action="access_grant", target_type="person",
                     target_id=user.get_username(), before=before, after={"user": user.get_username(), "is_admin": is_admin})
    return access


def access_revoke(*, access: ProfileAccess, actor: str) -> None:
    with transaction.atomic():
        audit_record(profile=access.profile, actor=actor, tool="dashboard", action="access_revoke", target_type="person",
                     target_id=access.user.get_username(), before={"user": access.user.get_username(), "is_admin": access.is_admin}, after=None)
        access.delete()


def dashboard_token_create(*, profile: Profile, role: str, name: str, actor: str) -> tuple[ApiToken, str]:
    with transaction.atomic():
        token, plain = token_create(profile=profile, role=role, name=name)
        audit_record(profile=profile, actor=actor, tool="dashboard", action="token_create", target_type="token",
                     target_id=token.prefix, after={"role": role, "name": token.name, "prefix": token.prefix})
    return token, plain


def dashboard_token_revoke(*, token: ApiToken, actor: str) -> None:
    token_revoke(token=token, actor=actor, tool="dashboard")
