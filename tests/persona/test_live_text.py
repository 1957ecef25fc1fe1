from apps.persona.models import PersonaVersion
from apps.persona.services import persona_live_text


def test_live_text_is_empty_without_any_version(alice):
    assert persona_live_text(profile=alice) == ""


def test_live_text_renders_the_newest_version_only_for_its_profile(alice, bob):
    PersonaVersion.objects.create(profile=alice, number=1, entries=["old"], action="import")
    PersonaVersion.objects.create(profile=alice, number=2, entries=["Prefers tabs", "Writes Go"], action="merge")
    PersonaVersion.objects.create(profile=bob, number=3, entries=["bob only"], action="merge")
    assert persona_live_text(profile=alice) == "Prefers tabs\n§\nWrites Go\n"
    assert persona_live_text(profile=bob) == "bob only\n"
