"""Every token gets a name, unique within its profile.

Tokens created before names were required get `token-<prefix>`; a name shared by several
tokens of one profile keeps it on the newest and gets `-<prefix>` appended on the others."""

from django.db import migrations, models


def name_every_token(apps, schema_editor):
    ApiToken = apps.get_model("accounts", "ApiToken")
    seen: set[tuple[int, str]] = set()
    for token in ApiToken.objects.order_by("-created_at", "-pk"):
        name = token.name.strip() or f"token-{token.prefix}"
        if (token.profile_id, name) in seen:
            name = f"{name}-{token.prefix}"
        seen.add((token.profile_id, name))
        if name != token.name:
            ApiToken.objects.filter(pk=token.pk).update(name=name)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_initial")]

    operations = [
        migrations.RunPython(name_every_token, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="apitoken",
            constraint=models.UniqueConstraint(fields=("profile", "name"), name="token_name_unique_per_profile"),
        ),
    ]
