"""Template helpers: sanitized Markdown, query-string edits, small formatting."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any
from urllib.parse import urlencode

import markdown as md
import nh3
from django import template
from django.utils.safestring import mark_safe

register = template.Library()

_ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "i", "li", "ol", "p", "pre", "s", "strong", "sub", "sup", "table", "tbody", "td", "th",
    "thead", "tr", "ul",
}
_ALLOWED_ATTRS = {"a": {"href", "title"}, "abbr": {"title"}, "th": {"align"}, "td": {"align"}}


def render_markdown(text: str | None) -> str:
    """Markdown → HTML, then sanitized: memory text is untrusted (no scripts, no
    javascript: links, no raw HTML beyond a small allow-list)."""
    html = md.markdown(text or "", extensions=["fenced_code", "tables", "sane_lists"], output_format="html")
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRS,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


@register.filter(name="markdown")
def markdown_filter(text: str | None) -> str:
    return mark_safe(render_markdown(text))


@register.simple_tag(takes_context=True)
def qs(context, **changes: Any) -> str:
    """The current query string with some keys replaced (None or "" removes a key)."""
    request = context["request"]
    params = request.GET.copy()
    for key, value in changes.items():
        if value is None or value == "":
            params.pop(key, None)
        else:
            params[key] = str(value)
    encoded = params.urlencode()
    return "?" + encoded if encoded else "?"


@register.filter
def pretty_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=str)


@register.filter
def truncate_chars(value: str | None, length: int = 160) -> str:
    text = value or ""
    return text if len(text) <= length else text[: length - 1] + "…"


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    if not mapping:
        return None
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def percent(part: float | None, whole: float | None) -> int:
    if not whole:
        return 0
    return max(0, min(100, round(100 * (part or 0) / whole)))


@register.simple_tag
def urlparams(**params: Any) -> str:
    clean = {k: v for k, v in params.items() if v not in (None, "")}
    return "?" + urlencode(clean) if clean else ""


@register.filter
def utc_minute(value: Any) -> str:
    """A timestamp as 'YYYY-MM-DD HH:MM' UTC (the dashboard's time zone), cheaply."""
    if not value:
        return ""

    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


_SWITCHABLE = ("overview", "records", "conversations", "scenes", "persona", "hitstats", "jobs", "skills")


@register.simple_tag
def section_url(section: str | None, slug: str) -> str:
    """The same section in another profile (the switcher keeps where you are)."""
    from django.urls import reverse

    name = section if section in _SWITCHABLE else "overview"
    return reverse(f"dashboard:{name}", args=[slug])
