from django.db import models


class McpSession(models.Model):
    """A streamable-HTTP MCP session (`Mcp-Session-Id`), opened by `initialize`.

    Kept in the database, not in process memory, so every web process and thread answers
    for it; it belongs to the token that opened it and answers to no other.
    """

    session_id = models.CharField(max_length=64, unique=True)
    token = models.ForeignKey("accounts.ApiToken", on_delete=models.CASCADE, related_name="mcp_sessions")
    protocol_version = models.CharField(max_length=32)
    client_name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"mcp session {self.session_id[:8]}… ({self.protocol_version})"
