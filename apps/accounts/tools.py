"""A minimal tool every role can call, so a token can be checked end to end."""

from __future__ import annotations

from apps.tools.registry import ToolContext, ToolParams, tool


class WhoAmIParams(ToolParams):
    pass


@tool(
    "whoami",
    params=WhoAmIParams,
    min_role="agent",
    description="Return the calling token's profile, role and call context (sessionKey, turn, cwd).",
)
def whoami(ctx: ToolContext, params: WhoAmIParams) -> dict:
    return {
        "profile": ctx.profile.slug,
        "mode": ctx.profile.mode,
        "role": ctx.role,
        "sessionKey": ctx.session_key,
        "turn": ctx.turn,
        "cwd": ctx.cwd,
    }
