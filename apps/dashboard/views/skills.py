"""Skills: by category, SKILL.md rendered sanitized, support files, pin/unpin."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from apps.dashboard.access import _get_profile_for_user, actor_for
from apps.dashboard.views.common import flash_refusal, page, refusal_from
from apps.skills import services as skill_services
from apps.tools.errors import NotFound, ToolError


def _split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body) — the front matter is shown as text, the body as Markdown."""
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            after = text.find("\n", end + 4)
            return text[3:end].strip("\n"), text[after + 1:] if after != -1 else ""
    return "", text


@login_required
def skill_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    category = request.GET.get("category") or None
    try:
        listing = skill_services.skill_list(profile=pv.profile, category=category)
    except ToolError as exc:
        flash_refusal(request, refusal_from(exc))
        listing = skill_services.skill_list(profile=pv.profile)
        category = None
    groups: dict[str, list] = {}
    for item in listing["skills"]:
        groups.setdefault(item["category"], []).append(item)
    trash = skill_services.skill_trash_list(profile=pv.profile)["entries"]
    context = {"groups": sorted(groups.items()), "categories": listing["categories"], "category": category,
               "returned": listing["returned"], "trash": trash[:50], "trash_total": len(trash)}
    return page(request, pv, "skills", "dashboard/skills/list.html", context)


@login_required
def skill_detail(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    try:
        skill = skill_services.skill_view(profile=pv.profile, name=name)
    except (NotFound, ToolError) as exc:
        raise Http404(str(exc)) from None
    front, body = _split_front_matter(skill["content"])
    file_name = request.GET.get("file")
    support = None
    if file_name:
        try:
            support = skill_services.skill_view(profile=pv.profile, name=name, file=file_name)
        except ToolError as exc:
            raise Http404(str(exc)) from None
    context = {"skill": skill, "front": front, "body": body, "support": support}
    return page(request, pv, "skills", "dashboard/skills/detail.html", context)


@login_required
@require_POST
def skill_pin(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    pin = request.POST.get("pin") == "1"
    func = skill_services.skill_pin if pin else skill_services.skill_unpin
    try:
        func(profile=pv.profile, actor=actor_for(request), name=name, tool="dashboard")
    except ToolError as exc:
        flash_refusal(request, refusal_from(exc))
    else:
        messages.success(request, f"{'Pinned' if pin else 'Unpinned'} {name}.")
    return redirect("dashboard:skill", slug=pv.slug, name=name)


@login_required
@require_POST
def skill_trash_restore(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    entry = request.POST.get("entry", "")
    try:
        result = skill_services.skill_restore(profile=pv.profile, actor=actor_for(request), entry=entry, tool="dashboard")
    except ToolError as exc:
        flash_refusal(request, refusal_from(exc))
        return redirect("dashboard:skills", slug=pv.slug)
    messages.success(request, f"Restored {result['name']} from the trash.")
    return redirect("dashboard:skill", slug=pv.slug, name=result["name"])
