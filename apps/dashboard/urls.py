"""Dashboard routes. Every profile page carries the profile slug: /p/<slug>/…"""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from apps.dashboard.views import (
    admin,
    conversations,
    export,
    hitstats,
    home,
    jobs,
    lineage,
    overview,
    persona,
    records,
    scenes,
    skills,
)

app_name = "dashboard"

profile_patterns = [
    path("", overview.overview, name="overview"),
    path("health/", overview.health, name="health"),
    path("export.zip", export.profile_export, name="export"),
    path("records/", records.record_list, name="records"),
    path("records/bulk/", records.record_bulk, name="records_bulk"),
    path("records/export/", records.record_export, name="records_export"),
    path("records/<str:record_id>/", records.record_detail, name="record"),
    path("records/<str:record_id>/fix/", records.record_fix, name="record_fix"),
    path("records/<str:record_id>/task-state/", records.record_task_state, name="record_task_state"),
    path("records/<str:record_id>/restore/", records.record_restore, name="record_restore"),
    path("records/<str:record_id>/lineage/", lineage.record_lineage, name="lineage_record"),
    path("conversations/", conversations.conversation_list, name="conversations"),
    path("conversations/session/", conversations.conversation_detail, name="conversation"),
    path("scenes/", scenes.scene_list, name="scenes"),
    path("scenes/<int:block_id>/", scenes.scene_detail, name="scene"),
    path("scenes/<int:block_id>/lineage/", lineage.block_lineage, name="lineage_scene"),
    path("scenes/<int:block_id>/archive/", scenes.scene_archive, name="scene_archive"),
    path("scenes/<int:block_id>/restore/", scenes.scene_restore, name="scene_restore"),
    path("persona/", persona.persona_page, name="persona"),
    path("persona/merge-all/", persona.persona_merge_all, name="persona_merge_all"),
    path("persona/entry/", persona.persona_entry, name="persona_entry"),
    path("persona/entries/<int:index>/lineage/", lineage.entry_lineage, name="lineage_entry"),
    path("persona/restore/", persona.persona_restore, name="persona_restore"),
    path("hits/", hitstats.hitstats_page, name="hitstats"),
    path("jobs/", jobs.job_list, name="jobs"),
    path("jobs/trigger/", jobs.job_trigger, name="job_trigger"),
    path("jobs/<int:run_id>/", jobs.job_detail, name="job"),
    path("jobs/<int:run_id>/progress/", jobs.job_progress, name="job_progress"),
    path("skills/", skills.skill_list, name="skills"),
    path("skill-trash/restore/", skills.skill_trash_restore, name="skill_trash_restore"),
    path("skills/<str:name>/", skills.skill_detail, name="skill"),
    path("skills/<str:name>/pin/", skills.skill_pin, name="skill_pin"),
    path("admin/", admin.admin_page, name="admin"),
    path("admin/tokens/create/", admin.token_create_view, name="token_create"),
    path("admin/tokens/<int:token_id>/revoke/", admin.token_revoke_view, name="token_revoke"),
    path("admin/access/", admin.access_grant_view, name="access_grant"),
    path("admin/access/<int:access_id>/revoke/", admin.access_revoke_view, name="access_revoke"),
    path("admin/audit/", admin.audit_page, name="audit"),
    path("admin/projects/", admin.known_projects_view, name="known_projects"),
]

urlpatterns = [
    path("", home.home, name="home"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(next_page="/login/"), name="logout"),
    path("p/<slug:slug>/", include(profile_patterns)),
]
