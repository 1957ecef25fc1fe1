"""Extraction quality of the L1 job against hand-labelled conversations.

    .venv/bin/python bench/extraction_quality.py            # every conversation in bench/data/extraction/
    .venv/bin/python bench/extraction_quality.py --only chat-zh-family --show
    .venv/bin/python bench/extraction_quality.py --set heldout   # the held-out conversations

Each conversation (YAML, written by hand) is logged through the real API
(`POST /api/v1/l0/messages`, an agent token) into a profile of its own, session by
session, and after each session the real `l1_extract` job runs (rules driver unless an
LLM is configured) — so a correction or a restatement in a later session meets the live
records of the earlier ones, as it would in use. Then the live records are compared with
the conversation's gold labels:

* gold memory: all its `keywords` (each `a|b` = either spelling) occur in one live record
  → recalled; its `type` and `scope` are checked on that record;
* trap (kinds: superseded, forgotten, declined, injected, one-off): all its keywords occur
  in a live record → violation;
* duplicate: a gold memory matched by more than one live record (each extra one counts;
  "of one type" counts only extra records of a type already matched — a task and the file
  it produced are two memories, a restatement stored twice is one);
* questions (long chats): the turn that answers a question is cited by some live record;
* conversations between people (`speakers`): the share of live records that name one of
  the speakers, and of records with a relative date ("yesterday", "上周") that also carry
  the date it was resolved to.

Printed: gold recall overall and per mode, language, mode × language and type (each with
its count of gold items); type and scope agreement; trap violations by kind; duplicates;
records per conversation; question coverage; speakers named and relative dates resolved;
eligible messages per second of job run time; and the targets with met / NOT MET.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from pipeline import setup_django

DATA = BENCH / "data" / "extraction"
HELDOUT = BENCH / "data" / "extraction-heldout"  # written after the rules were settled; never tuned against
STEP_MS = 45_000  # time between two messages of a session


def load(only: str = "", folder: Path = DATA) -> list[dict]:
    convs = []
    for path in sorted(folder.glob("*.yaml")):
        conv = yaml.safe_load(path.read_text(encoding="utf-8"))
        conv.setdefault("id", path.stem)
        if only and only not in conv["id"]:
            continue
        convs.append(conv)
    return convs


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(str(iso)).astimezone(UTC).timestamp() * 1000)


def rows_of(conv: dict, s_index: int, session: dict) -> list[dict]:
    key = session.get("key") or f"{conv['id']}-{s_index + 1}"
    start = _ms(session["date"])
    cwd = session.get("cwd", conv.get("cwd", "/home/user"))
    rows = []
    for i, turn in enumerate(session["messages"]):
        role, content = (turn[0], turn[1]) if isinstance(turn, list) else (turn["role"], turn["content"])
        rows.append({"id": f"{key}-{i + 1}", "role": role, "content": content, "timestamp": start + i * STEP_MS,
                     "sessionKey": key, "sessionId": f"sid-{key}", "cwd": cwd})
    return rows


def _occurs(keyword: str, text: str) -> bool:
    """Latin keywords match whole words ("ex" is not in "next"), a Chinese character beside one
    counting as a boundary ("一颗40mm的" holds "40mm"); Chinese ones as substrings."""
    word = keyword.strip().casefold()
    if re.fullmatch(r"[\w .:/%+-]+", word, re.ASCII):
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?:e?s)?(?![A-Za-z0-9_])", text) is not None  # plurals count
    return word in text


def _matches(content: str, keywords: list[str]) -> bool:
    text = content.casefold()
    return all(any(_occurs(alt, text) for alt in str(k).split("|")) for k in keywords)


def run_conversation(conv: dict, client) -> dict:
    from apps.accounts.services import profile_create, token_create
    from apps.conversations.cursors import cursor_get
    from apps.pipeline import jobs, scheduling
    from apps.records.models import L1Record

    profile = profile_create(slug=re.sub(r"[^a-z0-9-]", "-", conv["id"].lower())[:40], mode=conv["mode"])
    if conv.get("projects"):
        profile.known_projects = list(conv["projects"])
        profile.save()
    _, token = token_create(profile=profile, role="agent", name="extraction bench")
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    run_seconds, messages_read, runs = 0.0, 0, 0
    refs: list[str] = []
    for s_index, session in enumerate(conv["sessions"]):
        rows = rows_of(conv, s_index, session)
        response = client.post("/api/v1/l0/messages", data=json.dumps({"messages": rows}), content_type="application/json", **headers)
        if response.status_code != 200:
            raise SystemExit(f"{conv['id']}: ingest failed {response.status_code} {response.content[:300]!r}")
        refs.extend(r["messageRef"] for r in response.json()["rows"])
        for _ in range(20):
            run = scheduling.request_run(profile=profile, kind="l1_extract", reason="extraction bench", send=False) or scheduling.active_run(
                profile=profile, kind="l1_extract"
            )
            done = jobs.execute_run(run_id=run.pk)
            runs += 1
            run_seconds += done.duration_seconds or 0
            messages_read += int(done.counts.get("messagesRead", 0) or 0)
            if done.status != "succeeded":
                raise SystemExit(f"{conv['id']}: run failed: {done.error}")
            if not done.counts.get("backlogRemains"):
                break
    live = list(L1Record.objects.filter(profile=profile, deleted=False).order_by("created_at"))
    cursor_get(profile=profile, kind="l1")
    return {"live": live, "runSeconds": run_seconds, "messagesRead": messages_read, "runs": runs, "refs": refs}


def evaluate(conv: dict, outcome: dict) -> dict:
    live = outcome["live"]
    gold_rows = []
    for gold in conv.get("gold") or []:
        hits = [r for r in live if _matches(r.content, gold["keywords"])]
        row = {"gold": gold, "hit": bool(hits), "records": hits}
        if hits:
            row["typeOk"] = any(r.type == gold.get("type") for r in hits) if gold.get("type") else None
            row["scopeOk"] = any((r.metadata or {}).get("scope") == gold["scope"] for r in hits) if gold.get("scope") else None
        gold_rows.append(row)
    traps = []
    for trap in conv.get("traps") or []:
        bad = [r for r in live if _matches(r.content, trap["keywords"])]
        traps.append({"trap": trap, "violated": bool(bad), "records": bad})
    cited = {ref for r in live for ref in (r.source_message_ids or [])}
    questions = []
    for q in conv.get("questions") or []:
        ref = outcome["refs"][int(q["turn"]) - 1]
        questions.append({"q": q["q"], "cited": ref in cited})
    named, dated = [], []
    speakers = [str(s) for s in conv.get("speakers") or []]
    for r in live if speakers else []:
        named.append(any(_occurs(name, r.content.casefold()) for name in speakers))
        if RELATIVE_DATE_RE.search(r.content):
            dated.append(bool(RESOLVED_DATE_RE.search(r.content)))
    return {"gold": gold_rows, "traps": traps, "questions": questions, "named": named, "dated": dated}


# A relative date in a record, and the absolute date the rules write beside it.
RELATIVE_DATE_RE = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last (week|weekend|month|year|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|next (week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|\w+ (days|weeks|months) ago|this (morning|evening|afternoon))\b"
    r"|昨天|前天|今天|明天|上周|下周|上个月|下个月|去年|明年|[一两三四五六七八九十\d]+(天|周|个月)(前|以前)",
    re.IGNORECASE,
)
# A year said relatively ("next year", "去年") resolves to the year alone: "next year (2027)".
RESOLVED_DATE_RE = re.compile(r"\d{4}-\d{2}|[(（]\d{4}[)）]")


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:5.1f} % ({a}/{b})" if b else "   n/a"


def report(convs: list[dict], results: list[dict], outcomes: list[dict], show: bool) -> None:
    groups: dict[str, list[bool]] = defaultdict(list)
    type_ok, scope_ok = [], []
    trap_kinds: dict[str, list[bool]] = defaultdict(list)
    duplicates = same_type = 0
    questions = []
    named, dated = [], []
    for conv, res in zip(convs, results):
        for row in res["gold"]:
            g = row["gold"]
            for key in ("all", f"mode={conv['mode']}", f"lang={conv['language']}", f"cell={conv['mode']}×{conv['language']}",
                        f"type={g.get('type', '?')}"):
                groups[key].append(row["hit"])
            if row["hit"]:
                duplicates += len(row["records"]) - 1
                # The same memory twice: records of one type (a task and the file it produced are two memories).
                same_type += len(row["records"]) - len({r.type for r in row["records"]})
                if row.get("typeOk") is not None:
                    type_ok.append(row["typeOk"])
                if row.get("scopeOk") is not None:
                    scope_ok.append(row["scopeOk"])
        for t in res["traps"]:
            trap_kinds[t["trap"]["kind"]].append(t["violated"])
        questions.extend(q["cited"] for q in res["questions"])
        named.extend(res["named"])
        dated.extend(res["dated"])
    print("\n== gold recall")
    for key in sorted(groups, key=lambda k: (k != "all", k.split("=")[0], k)):
        print(f"  {key:28s} {pct(sum(groups[key]), len(groups[key]))}")
    print("\n== agreement on recalled gold")
    print(f"  {'type':28s} {pct(sum(type_ok), len(type_ok))}")
    print(f"  {'scope':28s} {pct(sum(scope_ok), len(scope_ok))}")
    print("\n== trap violations (live records holding trapped content)")
    for kind in sorted(trap_kinds):
        print(f"  {kind:28s} {sum(trap_kinds[kind])} of {len(trap_kinds[kind])}")
    print("\n== other")
    print(f"  {'duplicates of a gold memory':28s} {duplicates} (of one type: {same_type})")
    counts = [len(o["live"]) for o in outcomes]
    print(f"  {'live records / conversation':28s} mean {sum(counts) / len(counts):.1f}, min {min(counts)}, max {max(counts)}")
    if questions:
        print(f"  {'questions with cited answer':28s} {pct(sum(questions), len(questions))}")
    if named:
        print(f"  {'records naming a speaker':28s} {pct(sum(named), len(named))}")
    if dated:
        print(f"  {'relative dates resolved':28s} {pct(sum(dated), len(dated))}")
    read = sum(o["messagesRead"] for o in outcomes)
    seconds = sum(o["runSeconds"] for o in outcomes)
    print(f"  {'conversations':28s} {len(convs)} ({sum(len(s['messages']) for c in convs for s in c['sessions'])} messages, "
          f"{sum(o['runs'] for o in outcomes)} job runs)")
    print(f"  {'eligible messages / s':28s} {read / seconds:.1f} ({read} read in {seconds:.1f} s of run time)" if seconds else "")
    cells = {k: v for k, v in groups.items() if k.startswith("cell=")}
    violations = sum(sum(v) for v in trap_kinds.values())
    print("\n== targets")
    targets = [
        ("gold recall ≥ 80 %", sum(groups["all"]) >= 0.8 * len(groups["all"])),
        ("every mode × language cell ≥ 70 %", all(sum(v) >= 0.7 * len(v) for v in cells.values())),
        ("0 trap violations", violations == 0),
        ("no duplicate of a gold memory", duplicates == 0),
        ("no duplicate of one type", same_type == 0),
    ]
    if questions:
        targets.append(("questions with cited answer ≥ 85 %", sum(questions) >= 0.85 * len(questions)))
    for label, ok in targets:
        print(f"  {label:40s} {'met' if ok else 'NOT MET'}")
    if show:
        for conv, res, out in zip(convs, results, outcomes):
            print(f"\n--- {conv['id']} ({conv['mode']}, {conv['language']})")
            for row in res["gold"]:
                mark = "ok " if row["hit"] else "MISS"
                extra = "" if not row["hit"] or row.get("typeOk") in (None, True) else f"  [type {[r.type for r in row['records']]}]"
                print(f"  {mark} {row['gold']['keywords']}{extra}")
                if len(row.get("records") or []) > 1:
                    print(f"  DUP  {[r.content for r in row['records']]}")
            for t in res["traps"]:
                if t["violated"]:
                    print(f"  TRAP {t['trap']['kind']}: {[r.content for r in t['records']]}")
            for q in res["questions"]:
                if not q["cited"]:
                    print(f"  UNCITED {q['q']}")
            for r in out["live"]:
                print(f"     · [{r.type}/{(r.metadata or {}).get('scope')}] {r.content}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="run conversations whose id contains this")
    parser.add_argument("--show", action="store_true", help="print every conversation's records and misses")
    parser.add_argument("--data-dir", default="", help="keep the throwaway data here")
    parser.add_argument("--set", choices=("dev", "heldout"), default="dev",
                        help="dev: the set the rules were developed on; heldout: written afterwards, never tuned against")
    args = parser.parse_args()
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="mw-bench-extraction-"))
    setup_django(data_dir)
    from django.test import Client

    from apps.search.embedding import local_model_dir

    convs = load(args.only, HELDOUT if args.set == "heldout" else DATA)
    if not convs:
        raise SystemExit("no conversations")
    model = local_model_dir()
    print(f"{len(convs)} conversations; data dir {data_dir}; embedding model "
          f"{model if (model / 'model.onnx').exists() else 'MISSING (dedup falls back to text)'}")
    client = Client()
    outcomes, results = [], []
    t0 = time.monotonic()
    for conv in convs:
        outcome = run_conversation(conv, client)
        outcomes.append(outcome)
        results.append(evaluate(conv, outcome))
        print(f"  {conv['id']}: {len(outcome['live'])} live records", flush=True)
    print(f"(wall time {time.monotonic() - t0:.1f} s)")
    report(convs, results, outcomes, args.show)


if __name__ == "__main__":
    main()
