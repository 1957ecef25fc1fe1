"""`manage.py memory export|import|backup` (SPEC §7; docs/transfer.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.accounts.models import Profile
from apps.accounts.services import profile_create
from apps.tools.errors import ToolError
from apps.transfer import backup, bundle, exporter, importer, tdai
from apps.transfer.source import ImportFileError, SourceDir


def _bars(stream):
    from tqdm import tqdm

    def make(layer: str, total: int):
        return tqdm(total=total, desc=layer, unit="item", file=stream, leave=True)

    return make


class Command(BaseCommand):
    help = "Export a profile to the SPEC §7 layout, import one (or a TencentDB-Agent-Memory directory), or back up the service."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        exp = sub.add_parser("export", help="write one profile in the SPEC §7 layout")
        exp.add_argument("profile")
        exp.add_argument("dir")
        imp = sub.add_parser("import", help="read an export (or a TencentDB-Agent-Memory data directory) into a profile")
        imp.add_argument("profile", help="profile slug; created (in the export's mode) when it does not exist")
        imp.add_argument("dir")
        imp.add_argument("--format", choices=("auto", "memoryweb", "tdai"), default="auto")
        imp.add_argument("--dry-run", action="store_true", help="check everything and print what would be imported")
        imp.add_argument("--mode", default=None,
                         help="how to re-type records of the other mode: 'default' or TYPE=TYPE,... (e.g. persona=work_fact)")
        bak = sub.add_parser("backup", help="a consistent snapshot of the running service (database, shards, skills)")
        bak.add_argument("dir")

    def handle(self, *args, action: str, **options):
        try:
            if action == "export":
                return self._export(options["profile"], Path(options["dir"]))
            if action == "import":
                return self._import(options)
            return self._backup(Path(options["dir"]))
        except ImportFileError as exc:
            raise CommandError(f"nothing was imported: {exc}") from None
        except (ValueError, ToolError) as exc:
            raise CommandError(str(exc)) from None

    def _profile(self, slug: str) -> Profile:
        profile = Profile.objects.filter(slug=slug).first()
        if profile is None:
            raise CommandError(f"unknown profile {slug!r}")
        return profile

    def _export(self, slug: str, dest: Path) -> None:
        counts = exporter.profile_export(profile=self._profile(slug), dest=dest, progress=_bars(sys.stderr))
        self.stdout.write(f"exported {slug} to {dest}")
        self.stdout.write(", ".join(f"{k} {v}" for k, v in counts.items()))

    def _import(self, options) -> None:
        src = SourceDir(Path(options["dir"]))
        kind = options["format"]
        if kind == "auto":
            if bundle.is_export(src):
                kind = "memoryweb"
            elif tdai.is_tdai(src):
                kind = "tdai"
            else:
                raise CommandError(f"{options['dir']} holds neither a memoryDB/ folder (an export) nor conversations/ and records/ "
                                   "(a TencentDB-Agent-Memory directory); pass --format to say which it is")
        data = bundle.read_export(src) if kind == "memoryweb" else tdai.read_tdai(src)
        profile = Profile.objects.filter(slug=options["profile"]).first()
        mode = profile.mode if profile is not None else (data.source_mode or "code")
        mode_map = bundle.parse_mode_map(options["mode"], mode)
        # Everything is checked before the profile is created or anything is written.
        bundle.check_bundle(data, target_mode=mode, mode_map=mode_map)
        if profile is None:
            if options["dry_run"]:
                self.stdout.write(f"profile {options['profile']} does not exist; it would be created in {mode} mode")
                profile = Profile(slug=options["profile"], mode=mode)
            else:
                profile = profile_create(slug=options["profile"], mode=mode)
                self.stdout.write(f"created profile {profile.slug} ({mode} mode)")
        if options["dry_run"] and profile.pk is None:
            summary = importer.Summary(dry_run=True, notes=data.notes)
            summary.layers = {"l0": {"shards": len(data.l0)}, "l1": {"records": len(data.records)}, "l2": {"blocks": len(data.blocks)},
                              "skills": {"skills": len(data.skills)}}
        else:
            summary = importer.profile_import(profile=profile, bundle=data, dry_run=options["dry_run"], progress=_bars(sys.stderr))
        self.stdout.write("dry run, nothing written; would import:" if options["dry_run"] else f"imported into {profile.slug} ({kind}):")
        for line in summary.lines():
            self.stdout.write(f"  {line}")

    def _backup(self, dest: Path) -> None:
        report = backup.service_backup(dest=dest, progress=_bars(sys.stderr))
        for line in report:
            self.stdout.write(line)
