"""Recall log and budget columns hold every session key and turn the API accepts.

`session_key`/`turn` were varchar(300) while the API accepts 512-character session keys:
PostgreSQL answered 500 (DataError). They become text; the per-turn budget is unique on a
digest of the pair instead, because two long texts can exceed a btree index entry."""

import hashlib

from django.db import migrations, models


def fill_turn_keys(apps, schema_editor):
    RecallBudget = apps.get_model("hitstats", "RecallBudget")
    for budget in RecallBudget.objects.all().only("pk", "session_key", "turn"):
        key = hashlib.sha256(f"{budget.session_key}\x00{budget.turn}".encode()).hexdigest()
        RecallBudget.objects.filter(pk=budget.pk).update(turn_key=key)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_initial"),
        ("hitstats", "0003_ranking_index"),
    ]

    operations = [
        migrations.AlterField(model_name="recallevent", name="session_key", field=models.TextField(blank=True)),
        migrations.AlterField(model_name="recallevent", name="turn", field=models.TextField(blank=True)),
        migrations.RemoveConstraint(model_name="recallbudget", name="uniq_recall_budget_turn"),
        migrations.AlterField(model_name="recallbudget", name="session_key", field=models.TextField()),
        migrations.AlterField(model_name="recallbudget", name="turn", field=models.TextField()),
        migrations.AddField(model_name="recallbudget", name="turn_key", field=models.CharField(default="", max_length=64), preserve_default=False),
        migrations.RunPython(fill_turn_keys, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="recallbudget",
            constraint=models.UniqueConstraint(fields=("profile", "turn_key"), name="uniq_recall_budget_turn_key"),
        ),
    ]
