from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.dashboard.access import profiles_for_user


@login_required
def home(request: HttpRequest) -> HttpResponse:
    profiles = profiles_for_user(request.user)
    if len(profiles) >= 1:
        return redirect("dashboard:overview", slug=profiles[0].slug)
    return render(request, "dashboard/no_profiles.html", {"my_profiles": []})
