from django.contrib import admin

from apps.pipeline.models import JobRun, JobSignal


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    list_display = ("id", "profile", "kind", "driver", "status", "trigger_reason", "created_at", "started_at", "finished_at")
    list_filter = ("kind", "status", "driver")
    readonly_fields = ("counts", "transcript", "progress", "error")


@admin.register(JobSignal)
class JobSignalAdmin(admin.ModelAdmin):
    list_display = ("id", "profile", "kind", "reason", "created_at", "consumed_by")
