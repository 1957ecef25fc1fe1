from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks


class SearchConfig(AppConfig):
    name = "apps.search"
    label = "search"

    def ready(self) -> None:
        checks.register(embedding_model_check, "memoryweb")


def embedding_model_check(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """At start-up: warn (recall runs degraded) when the default model is not built.
    Cheap: reads the manifest and looks for the files; `embeddings check` verifies fully."""
    from django.conf import settings

    from apps.search import embedding, model_build

    if settings.EMBED_MODEL:
        return []
    folder = embedding.local_model_dir()
    manifest = model_build.read_manifest(folder)
    if manifest is None or not model_build.manifest_files_ok(folder, manifest):
        return [checks.Warning(
            f"the embedding model is not built in {folder}; recall answers degraded (keyword search) until it is",
            hint="run `python manage.py embeddings build` (downloads ~91 MB once) or `make embeddings`",
            id="memoryweb.W001",
        )]
    return []
