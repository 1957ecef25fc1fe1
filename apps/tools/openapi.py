"""OpenAPI 3.1 document of every endpoint, generated from the same Pydantic models."""

from __future__ import annotations

from typing import Any

from apps.tools.registry import all_endpoints, all_tools

ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "details": {}},
            "required": ["code", "message"],
        }
    },
    "required": ["error"],
}

ERROR_RESPONSES = {
    str(status): {"description": code, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    for status, code in [
        (400, "invalid_params"), (401, "unauthorized"), (403, "forbidden"), (404, "not_found"), (409, "conflict"),
        (413, "payload_too_large"), (423, "locked"), (429, "rate_limited"), (503, "unavailable"),
    ]
}


def _lift_defs(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """Move Pydantic `$defs` into components and rewrite their refs."""
    defs = schema.pop("$defs", {})
    for key, value in defs.items():
        components[key] = value
    text_schema: dict[str, Any] = _rewrite_refs(schema)
    for key in list(defs):
        components[key] = _rewrite_refs(components[key])
    return text_schema


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (v.replace("#/$defs/", "#/components/schemas/") if k == "$ref" and isinstance(v, str) else _rewrite_refs(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


# The door (`apps.tools.dispatch.text_check`) refuses NUL in every string of a request;
# the document says so with a pattern, except on fields marked free text (replaced).
NO_NUL = "^[^\\u0000]*$"


def _publish_text_rule(node: Any) -> Any:
    if isinstance(node, list):
        return [_publish_text_rule(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _publish_text_rule(v) if k not in ("default", "examples", "const", "enum") else v for k, v in node.items()}
    if out.get("type") == "string" and not out.pop("x-free-text", False) and "enum" not in out and "const" not in out:
        if "pattern" in out:
            out.setdefault("allOf", []).append({"pattern": NO_NUL})
        else:
            out["pattern"] = NO_NUL
    out.pop("x-free-text", None)
    return out


def _body(schema: dict[str, Any], components: dict[str, Any], *, required: bool) -> dict[str, Any]:
    # An empty body is `{}`: it is required only when the model has required fields.
    return {"required": required, "content": {"application/json": {"schema": _publish_text_rule(_lift_defs(schema, components))}}}


def _has_required(schema: dict[str, Any]) -> bool:
    return bool(schema.get("required")) or "anyOf" in schema or "oneOf" in schema


def openapi_document() -> dict[str, Any]:
    components: dict[str, Any] = {"Error": ERROR_SCHEMA}
    paths: dict[str, Any] = {}
    for spec in all_tools():
        raw = spec.json_schema()
        body = _body(raw, components, required=_has_required(raw))
        paths[f"/api/v1/tools/{spec.name}"] = {
            "post": {
                "operationId": spec.name,
                "summary": spec.description.split("\n")[0][:200],
                "description": spec.description + f"\n\nRoles: {', '.join(spec.roles)}.",
                "security": [{"bearer": []}],
                "requestBody": body,
                "responses": {"200": {"description": "the tool's result object", "content": {"application/json": {"schema": {"type": "object"}}}}, **ERROR_RESPONSES},
            }
        }
    for ep in all_endpoints():
        op: dict[str, Any] = {
            "operationId": ep.path.strip("/").replace("/", "_").replace(".", "_") + "_" + ep.method,
            "summary": ep.summary,
            "responses": {"200": {"description": "OK"}, **ERROR_RESPONSES},
        }
        if ep.min_role:
            op["security"] = [{"bearer": []}]
        if ep.body is not None:
            raw = ep.body.model_json_schema()
            op["requestBody"] = _body(raw, components, required=_has_required(raw))
        paths.setdefault(ep.path, {})[ep.method] = op
    components = {name: _publish_text_rule(schema) for name, schema in components.items()}
    return {
        "openapi": "3.1.0",
        "info": {"title": "memoryweb tool API", "version": "1"},
        "paths": paths,
        "components": {"schemas": components, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }
