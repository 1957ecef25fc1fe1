"""The index engines: choice and fallback, the edge store's persistence, filters and IDF
equal to the old path, deletes, concurrency, compaction, crash recovery, migration from a
local-mode store, and a clean exit."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient

from apps.search import edge, embedding, index, services
from apps.search.edge import EdgeStore
from apps.search.mirror import FilterSpec
from apps.search.store import ClientStore, IndexLocked, IndexPoint, IndexUnavailable
from tests.search.conftest import tombstone, write_record

REPO = Path(__file__).resolve().parents[2]
needs_edge = pytest.mark.skipif(not edge.available(), reason="qdrant-edge-py has no wheel on this platform")


def _points(n: int = 60, seed: int = 3) -> list[IndexPoint]:
    rng = np.random.default_rng(seed)
    types = ["work_fact", "user_pref", "work_task", "chat_fact"]
    out = []
    for i in range(n):
        scope = ["global", "unknown", "self"][i % 3]
        payload = {"record_id": f"r{i:03d}", "type": types[i % 4], "scope": scope,
                   "project": f"/p/{i % 2}" if scope == "self" else "", "scene_id": f"sc{i % 5}" if i % 2 else "",
                   "task_state": ("done" if i % 8 == 2 else "open") if types[i % 4] == "work_task" else "", "priority": 60}
        tokens = sorted({int(t) for t in rng.integers(1, 40, size=4)})
        sparse = ([], []) if i % 17 == 16 else (tokens, [float(v) for v in rng.uniform(0.3, 1.2, size=len(tokens))])
        out.append(IndexPoint(payload["record_id"], rng.normal(size=16).astype(np.float32), sparse[0], sparse[1], payload))
    return out


SPECS = [None, FilterSpec(), FilterSpec(project="/p/1"), FilterSpec(types=["user_pref", "work_task"], project="/p/0"),
         FilterSpec(scene_ids=["sc1", "sc3"]), FilterSpec(hide_closed=True, project="/p/0"),
         FilterSpec(types=["work_task"], hide_closed=True, scope_filter=False)]


@pytest.fixture
def two_stores(tmp_path):
    """The same points in an edge store and in the old path (local mode + mirror)."""
    e = EdgeStore(tmp_path / "edge")
    c = ClientStore(QdrantClient(path=str(tmp_path / "local")), kind="local", location=str(tmp_path / "local"))
    for st in (e, c):
        st.create_collection("c", 16, "space-x")
        st.set_alias("mw-t", "c")
        st.upsert("c", _points())
    yield e, c
    e.close()
    c.close()


def _same_hits(a: list[tuple[str, float]], b: list[tuple[str, float]], atol: float) -> None:
    assert [r for r, _ in a] == [r for r, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=atol)


# ------------------------------------------------------------ engine choice
def test_auto_chooses_edge_when_the_wheel_is_there_and_local_mode_when_not(settings, monkeypatch):
    settings.INDEX_ENGINE = "auto"
    assert index.engine() == ("edge" if edge.available() else "local")
    monkeypatch.setitem(sys.modules, "qdrant_edge", None)  # what a platform without the wheel sees
    assert not edge.available()
    assert index.engine() == "local"
    settings.QDRANT_URL = "http://127.0.0.1:9"
    assert index.engine() == "server"


def test_the_setting_forces_either_engine_and_rejects_others(settings, monkeypatch):
    settings.INDEX_ENGINE = "local"
    assert index.engine() == "local"
    assert index.store().kind == "local"
    index.close_clients()
    settings.INDEX_ENGINE = "bogus"
    with pytest.raises(IndexUnavailable, match="MEMORYWEB_INDEX_ENGINE"):
        index.engine()
    settings.INDEX_ENGINE = "edge"
    monkeypatch.setitem(sys.modules, "qdrant_edge", None)
    with pytest.raises(IndexUnavailable, match="qdrant-edge-py is not installed"):
        index.store()


def test_recall_works_on_the_fallback_engine_without_the_wheel(alice, agent_api, settings, monkeypatch):
    settings.INDEX_ENGINE = "auto"
    monkeypatch.setitem(sys.modules, "qdrant_edge", None)
    index.close_clients()
    rec = write_record(alice, "The staging database lives on host db-stage-02.")
    write_record(alice, "Lunch is at noon.")
    body = agent_api.ok("recall_l1_records", query="staging database host")
    assert "degraded" not in body and body["records"][0]["recordId"] == rec.record_id
    assert index.store().kind == "local"


# ------------------------------------------------------- same answers, both
@needs_edge
def test_filters_and_scores_equal_the_old_path(two_stores):
    e, c = two_stores
    rng = np.random.default_rng(11)
    for spec in SPECS:
        for _ in range(3):
            q = rng.normal(size=16).astype(np.float32)
            _same_hits(e.search_dense("c", q, 20, spec), c.search_dense("c", q, 20, spec), atol=2e-3)  # edge stores float16
            toks = [int(t) for t in rng.integers(1, 40, size=3)]
            _same_hits(e.search_sparse("c", toks, [1.0, 1.0, 0.3], 20, spec),
                       c.search_sparse("c", toks, [1.0, 1.0, 0.3], 20, spec), atol=1e-4)


@needs_edge
def test_idf_is_qdrants_formula_over_the_live_points_after_deletes_and_updates(two_stores):
    e, c = two_stores
    points = {p.record_id: p for p in _points()}
    gone = ["r000", "r005", "r010", "r011"]
    for st in (e, c):
        st.delete("c", gone)
    changed = IndexPoint("r020", points["r020"].dense, [7, 8], [1.0, 0.5], points["r020"].payload)
    for st in (e, c):
        st.upsert("c", [changed])
    live = {rid: p for rid, p in points.items() if rid not in gone}
    live["r020"] = changed
    corpus = [p for p in live.values() if p.sparse_indices]  # points without a sparse vector are not in the corpus
    n = len(corpus)

    def expected(p: IndexPoint, token: int) -> float:
        df = sum(1 for x in corpus if token in x.sparse_indices)
        weight = dict(zip(p.sparse_indices, p.sparse_values)).get(token, 0.0)
        return weight * math.log((n - df + 0.5) / (df + 0.5) + 1.0)

    for token in (7, 8, 12, 33):
        for st in (e, c):
            hits = dict(st.search_sparse("c", [token], [1.0], 100, None))
            want = {rid: expected(p, token) for rid, p in live.items() if expected(p, token) > 0}
            assert set(hits) == set(want)
            assert all(hits[rid] == pytest.approx(want[rid], rel=1e-4) for rid in want)


@needs_edge
def test_deleted_points_leave_every_search_and_the_count(two_stores):
    e, _ = two_stores
    e.delete("c", ["r001", "r002"])
    q = _points()[1].dense
    assert "r001" not in {r for r, _ in e.search_dense("c", q, 100, None)}
    assert not {"r001", "r002"} & {r for r, _ in e.search_sparse("c", list(range(1, 40)), [1.0] * 39, 100, None)}
    assert e.count("c") == 58
    assert e.present("c", ["r001", "r003"]) == {"r003"}


# --------------------------------------------------------------- edge store
@needs_edge
def test_an_edge_store_persists_across_a_reopen(tmp_path):
    e = EdgeStore(tmp_path / "edge")
    e.create_collection("c", 16, "space-x")
    e.set_alias("mw-t", "c")
    e.upsert("c", _points())
    e.delete("c", ["r004"])
    q = _points()[7].dense
    before = (e.search_dense("c", q, 10, FilterSpec()), e.search_sparse("c", [3, 9], [1.0, 1.0], 10, FilterSpec()))
    e.close()
    e = EdgeStore(tmp_path / "edge")
    assert e.aliases() == {"mw-t": "c"} and e.space("c") == "space-x" and e.dim("c") == 16
    assert e.count("c") == 59
    after = (e.search_dense("c", q, 10, FilterSpec()), e.search_sparse("c", [3, 9], [1.0, 1.0], 10, FilterSpec()))
    assert before == after  # the IDF counts are rebuilt from the shard exactly
    e.close()


@needs_edge
def test_a_second_owner_is_refused_with_the_lock_message(tmp_path):
    e = EdgeStore(tmp_path / "edge")
    with pytest.raises(IndexLocked, match="held by another process"):
        EdgeStore(tmp_path / "edge")
    e.close()
    EdgeStore(tmp_path / "edge").close()  # released by close()


@needs_edge
def test_leftovers_of_an_interrupted_rebuild_or_compaction_are_removed_at_open(tmp_path):
    e = EdgeStore(tmp_path / "edge")
    e.create_collection("live", 16, "")
    e.set_alias("mw-t", "live")
    e.create_collection("unfinished", 16, "")  # a rebuild that never switched the alias
    e.upsert("live", _points(5))
    e.close()
    stray = tmp_path / "edge" / "collections" / "live" / "g999-dead"
    stray.mkdir()
    e = EdgeStore(tmp_path / "edge")
    assert e.collections() == ["live"]
    assert e.count("live") == 5
    assert not stray.exists()
    e.close()


@needs_edge
def test_reads_run_while_another_thread_writes(tmp_path):
    e = EdgeStore(tmp_path / "edge")
    e.create_collection("c", 16, "")
    e.set_alias("mw-t", "c")
    base = _points(200)
    e.upsert("c", base[:100])
    errors: list[BaseException] = []
    stop = threading.Event()
    reads = [0]

    def reader() -> None:
        rng = np.random.default_rng(5)
        while not stop.is_set():
            try:
                hits = e.search_dense("c", rng.normal(size=16).astype(np.float32), 10, FilterSpec())
                e.search_sparse("c", [1, 2, 3], [1.0, 1.0, 1.0], 10, None)
                assert len(hits) == 10
                reads[0] += 1
            except BaseException as exc:  # noqa: BLE001 (collected for the assertion below)
                errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(100, 200, 5):
        e.upsert("c", base[i:i + 5])
        e.delete("c", [base[i - 100].record_id])
    stop.set()
    for t in threads:
        t.join()
    assert not errors and reads[0] > 0
    assert e.count("c") == 180
    e.close()


@needs_edge
def test_a_compaction_keeps_the_writes_made_while_it_ran(tmp_path, monkeypatch):
    e = EdgeStore(tmp_path / "edge")
    e.create_collection("c", 16, "")
    e.set_alias("mw-t", "c")
    pts = _points(120)
    e.upsert("c", pts[:100])
    coll = e._coll("c")
    real = edge.optimize_offline

    def slow_optimise(path: Path) -> float:
        e.upsert("c", pts[100:])  # written while the copy is being optimised
        e.delete("c", ["r000", "r101"])
        e.set_payload("c", "r050", {**pts[50].payload, "type": "chat_fact"})
        return real(path)

    monkeypatch.setattr(edge, "optimize_offline", slow_optimise)
    before = coll.generation
    result = e.compact("c")
    assert coll.generation != before and result["replayed"] == 3
    assert not (tmp_path / "edge" / "collections" / "c" / before).exists()
    assert e.count("c") == 118
    assert e.present("c", ["r000", "r101", "r119"]) == {"r119"}
    assert "r050" in {r for r, _ in e.search_dense("c", pts[50].dense, 5, FilterSpec(types=["chat_fact"], scope_filter=False))}
    e.close()
    e = EdgeStore(tmp_path / "edge")  # the switched generation is what a restart opens
    assert e.count("c") == 118
    e.close()


@needs_edge
def test_acknowledged_writes_survive_kill_9(tmp_path):
    root = tmp_path / "edge"
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(root)], cwd=str(REPO), stdout=subprocess.PIPE, text=True)
    acked = -1
    assert child.stdout is not None
    for line in child.stdout:
        acked = int(line.split()[1])
        if acked >= 8:
            child.kill()  # SIGKILL, mid-write
            break
    child.wait()
    e = EdgeStore(root)
    ids = [f"r{b}-{k}" for b in range(acked + 1) for k in range(20)]
    assert e.present("c", ids) == set(ids)
    count = e.count("c")
    # batches written after the last acknowledgement we read are each there whole or not at all
    later = [f"r{b}-{k}" for b in range(acked + 1, acked + 1 + (count - len(ids)) // 20) for k in range(20)]
    assert count % 20 == 0 and e.present("c", later) == set(later)
    assert e.search_sparse("c", [1000], [1.0], 5, None)
    e.close()


_WRITER = """
import sys
import numpy as np
from apps.search.edge import EdgeStore
from apps.search.store import IndexPoint
store = EdgeStore(sys.argv[1])
store.create_collection("c", 8, "")
store.set_alias("mw-c", "c")
rng = np.random.default_rng(0)
batch = 0
while True:
    store.upsert("c", [IndexPoint(f"r{batch}-{k}", rng.normal(size=8).astype("float32"), [1000, k], [1.0, 1.0],
                                  {"record_id": f"r{batch}-{k}", "scope": "global"}) for k in range(20)])
    print(f"acked {batch}", flush=True)
    batch += 1
"""


# ---------------------------------------------------------------- migration
@needs_edge
@pytest.mark.background_rebuild
@pytest.mark.django_db(transaction=True)
def test_a_local_mode_store_is_migrated_to_edge_without_losing_recall(alice, agent_api, settings, monkeypatch):
    settings.INDEX_ENGINE = "local"
    index.close_clients()
    recs = [write_record(alice, text) for text in ("Kafka keeps events for 7 days.", "Redis is the cache.",
                                                    "用户喜欢喝茶。")]
    old = index.current_collection(alice)
    index.close_clients()
    settings.INDEX_ENGINE = "edge"  # the install switches engines
    started = []
    real_reindex = index.reindex_profile

    def slow_reindex(profile, **kwargs):
        started.append(1)
        time.sleep(0.3)
        return real_reindex(profile, **kwargs)

    monkeypatch.setattr(index, "reindex_profile", slow_reindex)
    body = agent_api.ok("recall_l1_records", query="how long are kafka events kept")
    assert "degraded" not in body and body["records"][0]["recordId"] == recs[0].record_id  # the old store answers
    late = write_record(alice, "Postgres backups run nightly.")  # while the rebuild runs: into the old store
    thread = index._rebuilds[alice.slug]["thread"]
    thread.join(timeout=120)
    assert started == [1] and index.rebuild_status()[alice.slug]["state"] == "done"
    assert index.store().kind == "edge" and index.current_collection(alice) != old
    assert index.store().aliases().get(index.alias_name(alice)) == index.current_collection(alice)
    assert index.count_points(alice) == 4
    assert not any(key.startswith("local:") for key in index._stores)  # the emptied local store was closed
    body = agent_api.ok("recall_l1_records", query="when do postgres backups run")
    assert body["records"][0]["recordId"] == late.record_id
    tombstone(recs[1])
    assert index.count_points(alice) == 3
    index.close_clients()
    client = QdrantClient(path=settings.QDRANT_PATH)
    try:
        assert old not in {c.name for c in client.get_collections().collections}
    finally:
        client.close()


# --------------------------------------------------------------------- exit
@pytest.mark.parametrize("engine", ["auto", "local"])
def test_a_process_that_recalled_exits_with_an_empty_stderr(engine, tmp_path):
    if engine == "auto" and not edge.available():
        pytest.skip("no edge wheel: auto is local mode")
    env = {**os.environ, "MEMORYWEB_DATA_DIR": str(tmp_path), "MEMORYWEB_INDEX_ENGINE": engine,
           "QDRANT_PATH": str(tmp_path / "qdrant"), "QDRANT_EDGE_PATH": str(tmp_path / "index-edge"),
           "MEMORYWEB_EMBED_MODEL_DIR": str(embedding.local_model_dir().parent), "DJANGO_SETTINGS_MODULE": "memoryweb.settings",
           "MEMORYWEB_LOG_LEVEL": "WARNING"}
    env.pop("DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-c", _RECALLER], cwd=str(REPO), env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"
    assert proc.stderr == ""


_RECALLER = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from apps.accounts.services import profile_create
from apps.records.models import L1Record
from apps.records.normalize import content_key
from apps.search import services
from apps.search.outbox import drain_outbox, enqueue_index_op
from django.utils import timezone
p = profile_create(slug="exit")
now = timezone.now()
L1Record.objects.create(profile=p, record_id="l1_exit_1", content="Kafka keeps events for 7 days.", type="work_fact",
                        priority=60, metadata={"scope": "global"}, created_at=now, updated_at=now,
                        content_key=content_key("Kafka keeps events for 7 days."))
enqueue_index_op(profile=p, record_id="l1_exit_1", op="upsert")
drain_outbox(p.pk)
print(len(services.recall_records(profile=p, query="how long are kafka events kept", top_k=3)["records"]))
"""


def test_recall_candidates_agree_between_engines(alice, settings):
    """The service-level hybrid candidates of one store equal those of the other."""
    if not edge.available():
        pytest.skip("no edge wheel")
    texts = ["Kafka keeps events for 7 days.", "Redis is the cache.", "用户喜欢喝茶。", "部署前必须先运行数据库迁移脚本。",
             "The user goes to the gym on Tuesday and Thursday evenings."]
    seen = {}
    for engine in ("edge", "local"):
        settings.INDEX_ENGINE = engine
        settings.QDRANT_PATH = str(Path(settings.QDRANT_PATH).with_name(f"qdrant-{engine}"))
        settings.QDRANT_EDGE_PATH = str(Path(settings.QDRANT_EDGE_PATH).with_name(f"edge-{engine}"))
        index.close_clients()
        from apps.records.models import L1Record

        L1Record.objects.filter(profile=alice).delete()
        for i, t in enumerate(texts):
            write_record(alice, t, record_id=f"l1_same_{i}")
        cands = services.index_candidates(alice, "数据库迁移 before deploy", limit=15, filters=services.Filters())
        seen[engine] = [(r.record_id, r.dense_rank, r.sparse_rank) for r in cands.ranked]
    assert seen["edge"] == seen["local"]


@needs_edge
def test_a_scene_filter_is_searched_exactly_and_other_filters_by_the_graph(tmp_path, monkeypatch):
    """The scene field has no HNSW links: a filtered graph walk over it loses neighbours at
    a million records, so its points are compared exactly (docs/retrieval.md, full-scan
    threshold); type and scope filters keep the planner's choice."""
    e = EdgeStore(tmp_path / "edge")
    e.create_collection("c", 16, "")
    pts = _points(60)
    e.upsert("c", pts)
    coll = e._coll("c")
    asked: list = []
    real = coll.query
    monkeypatch.setattr(coll, "query", lambda request: asked.append(request.params) or real(request))
    q = pts[7].dense
    scene = [r for r, _ in e.search_dense("c", q, 5, FilterSpec(scene_ids=["sc2"], scope_filter=False))]
    e.search_dense("c", q, 5, FilterSpec(types=["work_fact"]))
    assert asked[0] is not None and asked[0].exact is True
    assert asked[1] is None or not asked[1].exact
    exact = sorted((p for p in pts if p.payload["scene_id"] == "sc2"), key=lambda p: -float(
        np.dot(p.dense, q) / (np.linalg.norm(p.dense) * np.linalg.norm(q))))
    assert scene == [p.record_id for p in exact[:5]]
    e.close()
