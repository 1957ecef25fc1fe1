"""Admin of one profile: API tokens (the plain token is shown once), people's access, and
the audit log. Only admins of the profile (or superusers) get here; others get 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from apps.accounts import selectors
from apps.accounts.locks import ProfileLocked
from apps.accounts.models import ROLES
from apps.dashboard import presenters, services
from apps.dashboard.access import ProfileView, _get_profile_for_user, actor_for
from apps.dashboard.views.common import flash_refusal, page, refusal_from
from apps.records.project import known_projects_set
from apps.scenes import selectors as scene_selectors
from apps.tools.errors import ToolError


def _get_admin_profile_for_user(request: HttpRequest, slug: str) -> ProfileView:
    pv = _get_profile_for_user(request, slug)
    if not pv.is_admin:
        raise Http404("no such page")
    return pv


def _admin_context(pv: ProfileView, **extra) -> dict:
    return {
        "tokens": selectors.profile_tokens(pv.profile),
        "access": selectors.profile_access(pv.profile),
        "roles": ROLES,
        **extra,
    }


@login_required
def admin_page(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    return page(request, pv, "admin", "dashboard/admin/page.html", _admin_context(pv))


@login_required
@require_POST
def token_create_view(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    role = request.POST.get("role", "")
    if role not in ROLES:
        messages.error(request, f"role must be one of {', '.join(ROLES)}")
        return redirect("dashboard:admin", slug=pv.slug)
    name = request.POST.get("name", "").strip()
    try:
        if not name:
            raise ValueError("give the token a name (e.g. laptop-claude): the audit log shows it")
        token, plain = services.dashboard_token_create(profile=pv.profile, role=role, name=name, actor=actor_for(request))
    except ValueError as exc:
        messages.error(request, str(exc))
        return redirect("dashboard:admin", slug=pv.slug)
    # Rendered, not redirected: the plain token exists only in this response.
    response = page(request, pv, "admin", "dashboard/admin/page.html", _admin_context(pv, new_token=token, plain_token=plain))
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke_view(request: HttpRequest, slug: str, token_id: int) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    token = selectors.profile_token(pv.profile, token_id)
    if token is None:
        raise Http404("no such token")
    services.dashboard_token_revoke(token=token, actor=actor_for(request))
    messages.success(request, f"Revoked token {token.prefix}….")
    return redirect("dashboard:admin", slug=pv.slug)


@login_required
@require_POST
def access_grant_view(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    username = request.POST.get("username", "").strip()
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        messages.error(request, f"No person named {username!r}; create one with manage.py createuser.")
        return redirect("dashboard:admin", slug=pv.slug)
    services.access_grant(profile=pv.profile, user=user, is_admin=request.POST.get("is_admin") == "on", actor=actor_for(request))
    messages.success(request, f"{username} can now open {pv.slug}.")
    return redirect("dashboard:admin", slug=pv.slug)


@login_required
@require_POST
def access_revoke_view(request: HttpRequest, slug: str, access_id: int) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    access = selectors.profile_access_row(pv.profile, access_id)
    if access is None:
        raise Http404("no such access")
    if access.user_id == request.user.pk:
        messages.error(request, "You cannot remove your own access.")
        return redirect("dashboard:admin", slug=pv.slug)
    services.access_revoke(access=access, actor=actor_for(request))
    messages.success(request, f"Removed {access.user.get_username()}'s access.")
    return redirect("dashboard:admin", slug=pv.slug)


def _audit_rows(pv: ProfileView, events: list) -> list[dict]:
    blocks = scene_selectors.block_ids_by_filename(pv.profile, [e.target_id for e in events if e.target_type == "scene_block"])
    return presenters.audit_rows(events, pv.slug, blocks)


@login_required
def audit_page(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    filters = {k: request.GET.get(k, "").strip() for k in selectors.AUDIT_FILTERS}
    page_obj = Paginator(selectors.audit_events(pv.profile, filters), 50).get_page(request.GET.get("page"))
    choices = selectors.audit_choices(pv.profile)
    context = {"page_obj": page_obj, "filters": filters, "tools": choices["tools"], "actions": choices["actions"],
               "rows": _audit_rows(pv, list(page_obj.object_list))}
    return page(request, pv, "admin", "dashboard/admin/audit.html", context, partial="dashboard/admin/_audit_rows.html")


@login_required
@require_POST
def known_projects_view(request: HttpRequest, slug: str) -> HttpResponse:
    """Replace the profile's known project roots (one absolute path per line)."""
    pv = _get_admin_profile_for_user(request, slug)
    roots = [line.strip() for line in request.POST.get("roots", "").splitlines() if line.strip()]
    try:
        saved = known_projects_set(profile=pv.profile, roots=roots, actor=actor_for(request), tool="dashboard")
    except (ToolError, ProfileLocked) as exc:
        refusal = refusal_from(exc)
        flash_refusal(request, refusal)
        response = page(request, pv, "admin", "dashboard/admin/page.html", _admin_context(pv, typed_roots=request.POST.get("roots", "")))
        return response
    messages.success(request, f"Saved {len(saved)} known project{'s' if len(saved) != 1 else ''}.")
    return redirect("dashboard:admin", slug=pv.slug)
