from django.contrib import admin

from apps.accounts.models import ApiToken, AuditEvent, Profile, ProfileAccess

admin.site.register(Profile)
admin.site.register(ProfileAccess)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "profile", "role", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("token_hash",)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "profile", "actor", "tool", "action", "target_id")
