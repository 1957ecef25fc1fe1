"""The import rules of docs/architecture.md ("Which app may import which"), read from the
source with `ast`: every `import` and `from … import` of `apps/`, function-level ones
included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parent.parent / "apps"

# The front ends: nothing below them may import them.
FRONTS = {"dashboard", "mcp", "memory", "transfer"}
# Who may import a front end (besides itself).
FRONT_IMPORTERS = {"transfer": {"dashboard"}}
# The base: they import no domain app.
BASE = {"accounts": {"tools"}, "tools": {"accounts"}}
# Libraries of the vector index and the embedding model: apps/search alone.
SEARCH_ONLY = {"qdrant_client", "qdrant_edge", "fastembed", "onnxruntime"}
# The dashboard reads through the owners' selectors. It may use the accounts models (login,
# profile access and tokens are its concern) and, from other apps' models, only what it
# uses today: constants for forms and filters and the model classes named here. The list
# only shrinks.
DASHBOARD_MODEL_NAMES = {
    "apps.records.models": {"L1Record", "SCOPES", "TASK_STATES"},
    "apps.pipeline.models": {"ACTIVE_STATUSES", "JobRun", "KINDS"},
    "apps.scenes.models": {"SceneBlock"},
}


def imports_of(source: str) -> list[tuple[str, list[str]]]:
    """(module, imported names) for each absolute import of a module's text."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def violations(app: str, source: str, *, rules_driver: bool = False) -> list[str]:
    """What the import rules refuse in one module of `apps/<app>/` (`rules_driver`: a module
    of `apps/pipeline/rules/`, which reads every other app through its selectors)."""
    out: list[str] = []
    for module, names in imports_of(source):
        parts = module.split(".")
        if parts[0] in SEARCH_ONLY and app != "search":
            out.append(f"{module}: only apps/search touches the index and the embedding model")
        if parts[0] != "apps":
            continue
        # `from apps import records` names the app in `names`.
        targets = [(parts[1], parts[2:])] if len(parts) > 1 else [(name, []) for name in names]
        for target, rest in targets:
            if target == app:
                continue
            if target in FRONTS and app not in FRONT_IMPORTERS.get(target, set()):
                out.append(f"{module}: apps/{app} may not import the front end apps/{target}")
            if app in BASE and target not in BASE[app]:
                out.append(f"{module}: apps/{app} is a base app and imports no domain app")
            if app == "dashboard" and rest[:1] == ["models"] and target != "accounts":
                allowed = DASHBOARD_MODEL_NAMES.get(module, set())
                for name in names or ["*"]:
                    if name not in allowed:
                        out.append(f"{module}.{name}: the dashboard reads apps/{target} through its selectors, not its models")
            if rules_driver and rest[:1] == ["models"]:
                out.append(f"{module}: the rules driver reads apps/{target} through its selectors, not its models")
    return out


def is_rules_driver(path: Path) -> bool:
    return path.relative_to(APPS).parts[:2] == ("pipeline", "rules")


def app_modules() -> list[tuple[str, Path]]:
    return [
        (path.relative_to(APPS).parts[0], path)
        for path in sorted(APPS.rglob("*.py"))
        if "migrations" not in path.parts and len(path.relative_to(APPS).parts) > 1
    ]


def test_every_module_of_apps_keeps_the_import_rules():
    modules = app_modules()
    assert len(modules) > 150, "the walk found too few modules to be reading apps/"
    broken = [
        f"{path.relative_to(APPS.parent)}: {problem}"
        for app, path in modules
        for problem in violations(app, path.read_text(encoding="utf-8"), rules_driver=is_rules_driver(path))
    ]
    assert broken == []


@pytest.mark.parametrize(
    ("app", "source", "expected"),
    [
        ("records", "from apps.dashboard.views import common\n", "may not import the front end apps/dashboard"),
        ("scenes", "def f():\n    from apps.mcp import server\n", "may not import the front end apps/mcp"),
        ("pipeline", "from apps import transfer\n", "may not import the front end apps/transfer"),
        ("dashboard", "from apps.records.models import L1Change\n", "through its selectors, not its models"),
        ("dashboard", "from apps.persona.models import PersonaProposal\n", "through its selectors, not its models"),
        ("records", "import qdrant_client\n", "only apps/search touches"),
        ("pipeline", "from fastembed import TextEmbedding\n", "only apps/search touches"),
        ("dashboard", "import onnxruntime as ort\n", "only apps/search touches"),
        ("tools", "from apps.records.selectors import record_get\n", "base app"),
        ("accounts", "from apps.scenes import services\n", "base app"),
    ],
)
def test_an_import_that_breaks_a_rule_is_named(app, source, expected):
    found = violations(app, source)
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    ("app", "source"),
    [
        ("dashboard", "from apps.records.selectors import filter_records\n"),
        ("dashboard", "from apps.accounts.models import Profile, ProfileAccess\n"),
        ("dashboard", "from apps.records.models import SCOPES, TASK_STATES\n"),
        ("dashboard", "from apps.transfer.exporter import profile_export_zip\n"),
        ("search", "from qdrant_client import models\n"),
        ("records", "from apps.scenes.services.cursor import resolve_l2_cursor\n"),
        ("tools", "from apps.accounts.models import ROLE_ADMIN\n"),
    ],
)
def test_an_import_the_rules_allow_passes(app, source):
    assert violations(app, source) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from apps.records.models import L1Record\n", ["through its selectors"]),
        ("def f():\n    from apps.scenes.models import SceneBlock\n", ["through its selectors"]),
        ("from apps.records.selectors import records_with_ids\n", []),
        ("from apps.pipeline.models import KIND_L1\n", []),
    ],
)
def test_the_rules_driver_reads_other_apps_through_their_selectors(source, expected):
    found = violations("pipeline", source, rules_driver=True)
    assert [e for e in expected if not any(e in f for f in found)] == [] and len(found) == len(expected), found
