"""Tool registry, call context and the parameter base model.

Each app declares its tools in `apps/<app>/tools.py` with `@tool(...)`; the tools app
imports those modules at start-up (autodiscovery), so the catalog, the HTTP endpoint,
the LLM driver and the dashboard all see one registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from apps.accounts.models import ROLE_ADMIN, ROLE_AGENT, ROLE_RANK, ROLE_WORKER, Profile

# Python's whitespace (`str.isspace`), spelled out so that Pydantic, JSON Schema (ECMA)
# and Python's `re` agree on it: "not blank" in a schema means what `.strip()` means in
# the services.
PY_SPACE = "\\t\\n\\v\\f\\r \\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
NOT_BLANK = f"[^{PY_SPACE}]"  # unanchored: at least one non-space character


def _not_blank(value: str) -> str:
    if not value.strip():  # the same set as NOT_BLANK: what `.strip()` removes
        raise ValueError("must not be empty or whitespace only")
    return value


# The schema states the rule as a pattern; validation says it in words.
NonBlank = Annotated[str, AfterValidator(_not_blank), Field(json_schema_extra={"pattern": NOT_BLANK})]
def IntBetween(low: int, high: int) -> Any:  # noqa: N802 (a type, used like one)
    """An int in [low, high]: stated as minimum/maximum in the schema, refused in the
    services' words ("must be between …")."""

    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, got {value}")
        return value

    return Annotated[int, AfterValidator(check), Field(json_schema_extra={"minimum": low, "maximum": high})]


# Integers that reach a database column (bigint) or a file offset.
MAX_BIGINT = 2**63 - 1


class ToolParams(BaseModel):
    """Base of every tool's parameters: unknown fields and wrong types are errors."""

    model_config = ConfigDict(extra="forbid", strict=True)


@dataclass
class ToolContext:
    profile: Profile
    role: str
    actor: str
    session_key: str = ""
    session_id: str = ""
    turn: str = ""
    cwd: str = ""
    token_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def has_role(self, role: str) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[role]

    @property
    def is_admin(self) -> bool:
        return self.role == ROLE_ADMIN


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: type[ToolParams]
    min_role: str
    func: Callable[[ToolContext, Any], Any]
    # The result field that is already text for a model to read (MCP shows it as the
    # call's content); None: the content is the result as JSON.
    text_result: str | None = None

    @property
    def roles(self) -> list[str]:
        return [r for r in (ROLE_AGENT, ROLE_WORKER, ROLE_ADMIN) if ROLE_RANK[r] >= ROLE_RANK[self.min_role]]

    def json_schema(self) -> dict[str, Any]:
        schema = self.params.model_json_schema()
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema


_REGISTRY: dict[str, ToolSpec] = {}


ToolFunc = Callable[["ToolContext", Any], Any]


def tool(name: str, *, params: type[ToolParams], min_role: str, description: str, text_result: str | None = None) -> Callable[[ToolFunc], ToolFunc]:
    """Register a tool. `min_role`: the lowest role allowed (agent < worker < admin);
    `text_result`: the result field a model reads as the answer (see ToolSpec)."""
    if min_role not in ROLE_RANK:
        raise ValueError(f"unknown role {min_role!r}")

    def decorator(func: ToolFunc) -> ToolFunc:
        if name in _REGISTRY and _REGISTRY[name].func.__qualname__ != func.__qualname__:
            raise RuntimeError(f"tool {name!r} registered twice")
        _REGISTRY[name] = ToolSpec(
            name=name, description=description.strip(), params=params, min_role=min_role, func=func, text_result=text_result,
        )
        return func

    return decorator


def get_tool(name: str) -> ToolSpec | None:
    return _REGISTRY.get(name)


def all_tools() -> list[ToolSpec]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


# Other JSON endpoints that the OpenAPI document lists beside the tools.
@dataclass(frozen=True)
class EndpointSpec:
    path: str
    method: str
    summary: str
    body: type[BaseModel] | None
    min_role: str | None


_ENDPOINTS: dict[tuple[str, str], EndpointSpec] = {}


def register_endpoint(path: str, method: str, summary: str, body: type[BaseModel] | None, min_role: str | None) -> None:
    _ENDPOINTS[(path, method.lower())] = EndpointSpec(path, method.lower(), summary, body, min_role)


def all_endpoints() -> list[EndpointSpec]:
    return [_ENDPOINTS[key] for key in sorted(_ENDPOINTS)]


# Health checks: name -> callable returning {"ok": bool, ...}. Apps register theirs.
_HEALTH: dict[str, Callable[[], dict[str, Any]]] = {}


def register_health_check(name: str, func: Callable[[], dict[str, Any]]) -> None:
    _HEALTH[name] = func


def health_checks() -> dict[str, Callable[[], dict[str, Any]]]:
    return dict(_HEALTH)


def health_report() -> dict[str, dict[str, Any]]:
    """The database check and every registered check, each answering whatever is broken."""
    from django.db import connection

    checks: dict[str, dict[str, Any]] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = {"ok": True, "vendor": connection.vendor}
    except Exception as exc:  # noqa: BLE001 — health must answer whatever is broken
        checks["database"] = {"ok": False, "error": str(exc)}
    for name, func in health_checks().items():
        try:
            checks[name] = dict(func())
        except Exception as exc:  # noqa: BLE001 — one failing check must not hide the others
            checks[name] = {"ok": False, "error": str(exc)}
    return checks
