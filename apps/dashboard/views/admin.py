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

from apps.accounts.locks import ProfileLocked
from apps.accounts.models import ROLES, ApiToken, AuditEvent, ProfileAccess
from apps.dashboard import services
from apps.dashboard.access import ProfileView, _get_profile_for_user, actor_for
from apps.dashboard.views.common import flash_refusal, page, refusal_from
from apps.records.project import known_projects_set
from apps.tools.errors import ToolError


def _get_admin_profile_for_user(request: HttpRequest, slug: str) -> ProfileView:
    pv = _get_profile_for_user(request, slug)
    if not pv.is_admin:
        raise Http404("no such page")
    return pv


def _admin_context(pv: ProfileView, **extra) -> dict:
    return {
        "tokens": list(ApiToken.objects.filter(profile=pv.profile).order_by("revoked_at", "-created_at")),
        "access": list(ProfileAccess.objects.filter(profile=pv.profile).select_related("user").order_by("user__username")),
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
    token = ApiToken.objects.filter(profile=pv.profile, pk=token_id).first()
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
    access = ProfileAccess.objects.filter(profile=pv.profile, pk=access_id).select_related("user", "profile").first()
    if access is None:
        raise Http404("no such access")
    if access.user_id == request.user.pk:
        messages.error(request, "You cannot remove your own access.")
        return redirect("dashboard:admin", slug=pv.slug)
    services.access_revoke(access=access, actor=actor_for(request))
    messages.success(request, f"Removed {access.user.get_username()}'s access.")
    return redirect("dashboard:admin", slug=pv.slug)


@login_required
def audit_page(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_admin_profile_for_user(request, slug)
    events = AuditEvent.objects.filter(profile=pv.profile).order_by("-id")
    filters = {k: request.GET.get(k, "").strip() for k in ("actor", "tool", "action", "target")}
    if filters["actor"]:
        events = events.filter(actor__icontains=filters["actor"])
    if filters["tool"]:
        events = events.filter(tool=filters["tool"])
    if filters["action"]:
        events = events.filter(action=filters["action"])
    if filters["target"]:
        events = events.filter(target_id=filters["target"])
    tools = list(AuditEvent.objects.filter(profile=pv.profile).values_list("tool", flat=True).distinct().order_by("tool")[:100])
    actions_ = list(AuditEvent.objects.filter(profile=pv.profile).values_list("action", flat=True).distinct().order_by("action")[:100])
    page_obj = Paginator(events, 50).get_page(request.GET.get("page"))
    context = {"page_obj": page_obj, "filters": filters, "tools": tools, "actions": actions_}
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
