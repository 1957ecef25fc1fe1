"""Template helpers: sanitized Markdown, query-string edits, small formatting."""

from __future__ import annotations

import json
import re
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


@register.filter(name="plain_refusal")
def plain_refusal_filter(refusal: dict[str, Any]) -> dict[str, Any]:
    from apps.dashboard.views.common import plain_refusal

    return plain_refusal(refusal or {})


_UTC_FORMATS = {"m": "%Y-%m-%d %H:%M", "s": "%Y-%m-%d %H:%M:%S", "d": "%Y-%m-%d"}


def _as_datetime(value: Any) -> Any:
    from datetime import datetime

    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not hasattr(value, "astimezone"):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


@register.filter
def utc(value: Any, precision: str = "m") -> str:
    """A timestamp (datetime or ISO text) as `<time>` in UTC, saying so ("… UTC"); the
    static script adds the viewer's local time as its tooltip. '' for no value."""
    from django.utils.html import format_html

    moment = _as_datetime(value)
    if moment is None:
        return "" if not value else str(value)
    moment = moment.astimezone(UTC)
    text = moment.strftime(_UTC_FORMATS.get(precision, _UTC_FORMATS["m"]))
    return format_html('<time datetime="{}" data-local>{} UTC</time>', moment.isoformat().replace("+00:00", "Z"), text)


def _is_token_prefix(text: str) -> bool:
    """The first 10 characters of a plain token (TOKEN_PREFIX + random), not a typed name."""
    from apps.accounts.services import TOKEN_PREFIX

    return len(text) == 10 and text.startswith(TOKEN_PREFIX)


def actor_words(actor: str | None) -> str:
    """An audit actor as a person reads it. Stored forms: `user:<name>` (dashboard),
    `token:<prefix>:<role>` or `token:<name>` (API tokens), `job:<kind>:<run>` (jobs);
    anything else is shown as stored."""
    text = (actor or "").strip()
    kind, _, rest = text.partition(":")
    if not rest:
        return text or "–"
    if kind == "user":
        return rest
    if kind == "job":
        job, _, run = rest.partition(":")
        return f"{job} job run #{run}" if run else f"{job} job"
    if kind == "token":
        head, _, role = rest.rpartition(":")
        if head and role in ("agent", "worker", "admin"):
            # A prefix is a short random string; a name is what an admin typed.
            return f"{role} token {head}…" if _is_token_prefix(head) else f"{role} token “{head}”"
        return f"token “{rest}”"
    return text


@register.filter
def actor_label(actor: str | None) -> str:
    from django.utils.html import format_html

    return format_html('<span class="actor" title="{}">{}</span>', actor or "", actor_words(actor))


_RECORD_ID = re.compile(r"(?<![\w/])(l1_[0-9A-Za-z][0-9A-Za-z_]{2,62})")
_TAG = re.compile(r"(<[^>]*>)")


@register.filter(needs_autoescape=False)
def link_records(html: str, slug: str) -> str:
    """Make every L1 record id in already sanitized HTML (the `markdown` filter's output)
    a link to its record page. Only text between tags is touched, never inside an <a>;
    an id is letters, digits and underscores, so nothing else can enter the markup."""
    from django.urls import reverse

    base = reverse("dashboard:records", args=[slug])
    out: list[str] = []
    in_link = 0
    for part in _TAG.split(str(html)):
        if part.startswith("<"):
            name = part[1:].lstrip("/").split(None, 1)[0].rstrip(">").lower() if len(part) > 2 else ""
            if name == "a":
                in_link += -1 if part.startswith("</") else 1
            out.append(part)
        elif in_link > 0:
            out.append(part)
        else:
            out.append(_RECORD_ID.sub(lambda m: f'<a class="mono record-link" href="{base}{m.group(1)}/">{m.group(1)}</a>', part))
    return mark_safe("".join(out))


@register.filter(name="job_counts")
def job_counts_filter(counts: Any) -> list[tuple[str, Any]]:
    from apps.dashboard.presenters import job_counts

    return job_counts(counts)


@register.filter
def boost_words(boosts: Any) -> str:
    from apps.dashboard.presenters import boost_words as words

    return words(boosts)


@register.simple_tag
def rank_words(dense: Any, sparse: Any) -> str:
    from apps.dashboard.presenters import rank_words as words

    return words(dense, sparse)


@register.filter
def plain_value(value: Any) -> str:
    """A stored value as a person reads it: text as it is, true/false, numbers, and JSON
    only for lists and objects."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
