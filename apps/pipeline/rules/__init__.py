"""The rules driver: deterministic jobs through the same tools the LLM driver calls."""

from __future__ import annotations

from apps.pipeline.models import KIND_L1, KIND_L2, KIND_L3, KIND_SKILL
from apps.pipeline.rules import l1, l2, l3, skills

RULES_DRIVERS = {KIND_L1: l1.run, KIND_L2: l2.run, KIND_L3: l3.run, KIND_SKILL: skills.run}
