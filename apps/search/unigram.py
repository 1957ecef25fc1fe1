"""A lean, exact stand-in for the `tokenizers` Tokenizer of the local model.

Why: `Tokenizer.from_file(tokenizer.json)` costs ~281 MB of RSS for this model (a
250,002-piece Unigram whose byte trie is a hash map per node), about a third of the web
process. This module encodes the same texts to the same ids from a ~6 MB file
(`tokenizer.lean`, derived from `tokenizer.json` next to it) held as one dict of pieces.

It re-implements exactly the pipeline `model_build.build_tokenizer` writes and fastembed
configures (`fastembed.common.preprocessor_utils.load_tokenizer`), step by step as
`tokenizers` runs it:

1. Special tokens (`<s>`, `</s>`, `<pad>`, `<unk>`, `<mask>`: added, not normalised) are
   split out of the raw text first and map straight to their ids.
2. Each other segment is normalised: the Replace steps (controls removed, odd spaces to a
   space), NFKC, runs of spaces to one. NFKC is Python's `unicodedata`, whose Unicode
   version is newer than the tables inside `tokenizers`; the few characters the two treat
   differently (new compatibility mappings, new combining classes, new compositions) are
   found at conversion by asking `tokenizers` itself, and stay outside NFKC, as
   `tokenizers` leaves them.
3. Metaspace: spaces become `▁`, `▁` is prepended to a non-empty segment that does not
   start with it, and the segment is split before every `▁` (each word on its own).
4. Unigram Viterbi per word, the same loop as `tokenizers`' `encode_optimized`: float64
   scores (the values `tokenizers` holds, see `convert`) summed in the same order from 0
   at each word, candidates by increasing length,
   a later candidate wins only when strictly better, unknown characters score the lowest
   piece minus 10, and runs of unknown pieces fuse into one `<unk>`. (SentencePiece's own
   encoder was measured and rejected: it sums float32 over the whole text, and that
   changes ids where two segmentations tie, e.g. repeated characters.)
5. Truncation to `max_length` (the special tokens included, from the right) and the
   `<s> $A </s>` template; a batch is padded to its longest row on the right.

The conversion refuses (ConversionError) any tokenizer.json whose layout is not the one
above, and checks itself against `tokenizers` on a built-in set of texts before writing.
`model_build.load_fastembed` falls back to the `tokenizers` Tokenizer when the file cannot
be derived or read, with one warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import struct
import threading
import unicodedata
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tokenizers import Tokenizer

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MAGIC = b"MWUNIGRAM1\n"
METASPACE = "\u2581"
UNK_PENALTY = 10.0  # tokenizers' K_UNK_PENALTY
WORD_CACHE_SIZE = 20_000  # words remembered with their ids (emptied when full)

# Texts the conversion checks against `tokenizers` before it writes the file: scripts,
# the special tokens inside text and in full width (normalised into vocabulary pieces),
# controls, odd spaces, composition, repeated characters (exact ties), code, truncation.
SELF_CHECK_TEXTS = [
    "", " ", "  a  b  ", "a ", " a", "\x01", "a\x01b", "\t\n\r\x0b\x0c", "a\u00a0b\u3000c\u2009d",
    "query: how do I rotate the database password?",
    "passage: 用户喜欢在周末去爬山，不喝咖啡。", "Mixed 中英文 text about Qdrant 向量索引 and jieba 分词.",
    "a<mask>b", "<s> <s>", "x </s> y<pad><unk>", "＜s＞ ＜unk＞ ＜mask＞ hi", "hello<unk>world",
    "Ｆｕｌｌ－ｗｉｄｔｈ，标点！（测试）", "ﬁ ﬀ ① ㍿ ㋿ 🯰🯱 ꟲ", "e\u0301 \u1100\u1161\u11a8 a\u0334\u0301",
    "🙂🙂🙂 👩‍👩‍👧 🇨🇳🇺🇸", "aaaaaaaaaaaa hahahaha ------ ====== ...... !!!!!! 哈哈哈哈哈哈",
    "haha9999999999999999999999999!!!", "*********!!!!!!!!!!!!!!!!!!!!!!======================",
    "def f(x):\n    return {'k': [x ** 2 for x in range(10)]}  # комментарий",
    "Ελληνικά, русский, العربية, हिन्दी, 日本語のテキスト, 한국어 텍스트",
    "\u200b\u200c\u200d\ufeff\ufffd\u2028\u2029\u1680 \u2581\u2581x",
    "word " * 700,
]


class ConversionError(RuntimeError):
    """tokenizer.json is not of the layout this module reproduces, or the derived
    tokenizer disagrees with `tokenizers` on the self-check texts."""


class LeanFileError(RuntimeError):
    """The derived file is missing, of another version, stale or damaged."""


class Encoding:
    """What fastembed reads from a `tokenizers.Encoding`."""

    __slots__ = ("attention_mask", "ids", "type_ids")

    def __init__(self, ids: list[int], attention_mask: list[int]) -> None:
        self.ids = ids
        self.attention_mask = attention_mask
        self.type_ids = [0] * len(ids)

    def __len__(self) -> int:
        return len(self.ids)


class LeanTokenizer:
    """Encodes like the `tokenizers` Tokenizer fastembed loads for the local model."""

    def __init__(self, pieces: Sequence[str], scores: array[float], meta: dict[str, Any]) -> None:
        self.meta = meta
        self._ids: dict[str, int] = {piece: i for i, piece in enumerate(pieces)}
        if len(self._ids) != len(pieces):
            raise LeanFileError("duplicate pieces")
        self._scores = scores
        # The longest piece starting with each two characters (bounds the search).
        self._reach: dict[str, int] = {}
        for piece in pieces:
            if len(piece) > 1 and len(piece) > self._reach.get(piece[:2], 0):
                self._reach[piece[:2]] = len(piece)
        self.unk_id: int = meta["unkId"]
        self._unk_score = min(scores) - UNK_PENALTY
        self.bos_id: int = meta["bosId"]
        self.eos_id: int = meta["eosId"]
        self.pad_id: int = meta["padId"]
        self.max_length: int = meta["maxLength"]
        self.special_token_to_id: dict[str, int] = dict(meta["specials"])
        names = sorted(self.special_token_to_id, key=len, reverse=True)
        self._specials = re.compile("(" + "|".join(re.escape(s) for s in names) + ")") if names else None
        self._steps: list[tuple[str, re.Pattern[str] | None, str]] = []
        for step in meta["normalizer"]:
            if step["type"] == "replace":
                self._steps.append(("replace", re.compile(step["pattern"]), step["content"]))
            else:
                self._steps.append(("nfkc", None, ""))
        protected = meta["protected"]
        self._protected = re.compile("([" + "".join(f"\\U{cp:08x}" for cp in protected) + "]+)") if protected else None
        self._cache: dict[str, tuple[int, ...]] = {}
        self._cache_lock = threading.Lock()

    # ------------------------------------------------------------------ API
    def encode_batch(self, texts: Iterable[str]) -> list[Encoding]:
        rows = [self._encode_ids(text) for text in texts]
        width = max((len(r) for r in rows), default=0)
        out = []
        for ids in rows:
            pad = width - len(ids)
            out.append(Encoding(ids + [self.pad_id] * pad, [1] * len(ids) + [0] * pad))
        return out

    def encode(self, text: str) -> Encoding:
        ids = self._encode_ids(text)
        return Encoding(ids, [1] * len(ids))

    # ------------------------------------------------------------- pipeline
    def _encode_ids(self, text: str) -> list[int]:
        budget = self.max_length - 2  # room left by <s> and </s>
        ids: list[int] = []
        segments = self._specials.split(text) if self._specials is not None else [text]
        for n, segment in enumerate(segments):
            if len(ids) >= budget:
                break
            if n % 2:  # a special token (re.split keeps the captured separators)
                ids.append(self.special_token_to_id[segment])
                continue
            if not segment:
                continue
            normalized = self.normalize(segment)
            if not normalized:
                continue
            spaced = normalized.replace(" ", METASPACE)
            if not spaced.startswith(METASPACE):
                spaced = METASPACE + spaced
            start = 0
            while start < len(spaced) and len(ids) < budget:
                end = spaced.find(METASPACE, start + 1)
                if end < 0:
                    end = len(spaced)
                ids.extend(self._word_ids(spaced[start:end]))
                start = end
        return [self.bos_id, *ids[:budget], self.eos_id]

    def normalize(self, text: str) -> str:
        for kind, pattern, content in self._steps:
            if kind == "replace":
                assert pattern is not None
                text = pattern.sub(content, text)
            else:
                text = self._nfkc(text)
        return text

    def _nfkc(self, text: str) -> str:
        if self._protected is None or self._protected.search(text) is None:
            return unicodedata.normalize("NFKC", text)
        parts = self._protected.split(text)
        return "".join(part if i % 2 else unicodedata.normalize("NFKC", part) for i, part in enumerate(parts))

    def _word_ids(self, word: str) -> tuple[int, ...]:
        hit = self._cache.get(word)
        if hit is not None:
            return hit
        ids = self._viterbi(word)
        with self._cache_lock:
            if len(self._cache) >= WORD_CACHE_SIZE:
                self._cache.clear()
            self._cache[word] = ids
        return ids

    def _viterbi(self, word: str) -> tuple[int, ...]:
        """tokenizers' `Unigram::encode_optimized` over one word, then its unk fusion.
        Candidates are tried in the same order (increasing length); pieces longer than
        one character are only looked for up to the longest piece that starts with the
        same two characters (the trie's early stop, without the trie)."""
        vocab, scores, reach = self._ids, self._scores, self._reach
        unk_id, unk_score = self.unk_id, self._unk_score
        size = len(word)
        best_score = [0.0] * (size + 1)
        best_start = [-1] * (size + 1)
        best_id = [0] * (size + 1)
        for start in range(size):
            base = best_score[start]
            end = start + 1
            pid = vocab.get(word[start])
            if pid is not None:
                candidate = scores[pid] + base
                if best_start[end] < 0 or candidate > best_score[end]:
                    best_score[end] = candidate
                    best_start[end] = start
                    best_id[end] = pid
            else:  # no single-character piece: the unknown node
                candidate = unk_score + base
                if best_start[end] < 0 or candidate > best_score[end]:
                    best_score[end] = candidate
                    best_start[end] = start
                    best_id[end] = unk_id
            stop = min(size, start + reach.get(word[start:start + 2], 0))
            for end in range(start + 2, stop + 1):
                pid = vocab.get(word[start:end])
                if pid is None:
                    continue
                candidate = scores[pid] + base
                if best_start[end] < 0 or candidate > best_score[end]:
                    best_score[end] = candidate
                    best_start[end] = start
                    best_id[end] = pid
        out: list[int] = []
        unk_run_end = -1  # end of a run of unknown pieces being fused (backwards)
        end = size
        while end > 0:
            start = best_start[end]
            if best_id[end] == self.unk_id:
                if unk_run_end < 0:
                    unk_run_end = end
            else:
                if unk_run_end >= 0:
                    out.append(vocab.get(word[end:unk_run_end], self.unk_id))
                    unk_run_end = -1
                out.append(best_id[end])
            end = start
        if unk_run_end >= 0:
            out.append(vocab.get(word[0:unk_run_end], self.unk_id))
        out.reverse()
        return tuple(out)


# ------------------------------------------------------------------ file format
def write(path: Path, pieces: Sequence[str], scores: Sequence[float], meta: dict[str, Any]) -> None:
    """MAGIC, then a u32-length JSON header (meta + the payload's sha256), then the
    payload: u32 count, the pieces joined by newlines (no piece holds one; checked),
    float64 scores. Deterministic: the same input writes the same bytes."""
    if any("\n" in p for p in pieces):
        raise ConversionError("a piece contains a newline")
    blob = "\n".join(pieces).encode("utf-8")
    payload = struct.pack("<II", len(pieces), len(blob)) + blob + array("d", scores).tobytes()
    header = json.dumps({**meta, "payloadSha256": hashlib.sha256(payload).hexdigest()}, sort_keys=True,
                        ensure_ascii=True).encode()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")  # writers never share one
    tmp.write_bytes(MAGIC + struct.pack("<I", len(header)) + header + payload)
    tmp.replace(path)


def read_meta(path: Path) -> dict[str, Any]:
    with open(path, "rb") as handle:
        head = handle.read(len(MAGIC) + 4)
        if len(head) < len(MAGIC) + 4 or not head.startswith(MAGIC):
            raise LeanFileError(f"{path.name} is not a lean tokenizer file")
        (size,) = struct.unpack("<I", head[len(MAGIC):])
        meta: dict[str, Any] = json.loads(handle.read(size))
    return meta


def tokenizers_version() -> str:
    from importlib.metadata import version

    return version("tokenizers")


def load(path: Path, *, source_sha256: str | None = None, tokenizers: str | None = None) -> LeanTokenizer:
    """Read the file; LeanFileError when it is not this format version's, was derived
    from another tokenizer.json (`source_sha256`), checked against another `tokenizers`
    version (`tokenizers`) or another Unicode version of `unicodedata` (both decide which
    characters stay outside NFKC), or its payload does not match its digest."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise LeanFileError(f"cannot read {path}: {exc}") from exc
    if not data.startswith(MAGIC):
        raise LeanFileError(f"{Path(path).name} is not a lean tokenizer file")
    at = len(MAGIC)
    (size,) = struct.unpack_from("<I", data, at)
    at += 4
    try:
        meta: dict[str, Any] = json.loads(data[at:at + size])
    except ValueError as exc:
        raise LeanFileError(f"{Path(path).name}: unreadable header") from exc
    at += size
    if meta.get("formatVersion") != FORMAT_VERSION:
        raise LeanFileError(f"{Path(path).name} has format {meta.get('formatVersion')}, this code reads {FORMAT_VERSION}")
    if source_sha256 is not None and meta.get("sourceSha256") != source_sha256:
        raise LeanFileError(f"{Path(path).name} was derived from another tokenizer.json")
    if tokenizers is not None and meta.get("tokenizersVersion") != tokenizers:
        raise LeanFileError(f"{Path(path).name} was checked against tokenizers {meta.get('tokenizersVersion')}, "
                            f"not {tokenizers}")
    if meta.get("unicodeVersion") != unicodedata.unidata_version:
        raise LeanFileError(f"{Path(path).name} was derived with Unicode {meta.get('unicodeVersion')}, "
                            f"not {unicodedata.unidata_version}")
    payload = memoryview(data)[at:]
    if hashlib.sha256(payload).hexdigest() != meta.get("payloadSha256"):
        raise LeanFileError(f"{Path(path).name} is damaged (payload digest)")
    count, blob_len = struct.unpack_from("<II", payload, 0)
    pieces = bytes(payload[8:8 + blob_len]).decode("utf-8").split("\n")
    scores = array("d")
    scores.frombytes(payload[8 + blob_len:])
    if len(pieces) != count or len(scores) != count:
        raise LeanFileError(f"{Path(path).name} is damaged (counts)")
    return LeanTokenizer(pieces, scores, meta)


# ------------------------------------------------------------------- conversion
def convert(folder: Path, target: Path, *, must_write: bool = True) -> LeanTokenizer:
    """Derive `target` from `folder`'s tokenizer.json (+ tokenizer_config.json,
    config.json, special_tokens_map.json as fastembed reads them), check it against
    `tokenizers` as fastembed configures it, then write it. Needs `tokenizers`.
    `must_write=False`: a folder that cannot be written to still gets the tokenizer,
    for this process (a warning says so)."""
    from fastembed.common.preprocessor_utils import load_tokenizer

    folder = Path(folder)
    raw = (folder / "tokenizer.json").read_bytes()
    reference, _ = load_tokenizer(folder)  # the tokenizer as fastembed sets it up
    # The scores as `tokenizers` holds them, not as the file spells them: its JSON reader
    # rounds a quarter of them one ulp off (65,856 of 250,002 here), and exact ties
    # between segmentations (repeated characters) are broken by those last bits.
    # Serialising writes the values it holds exactly.
    spec = json.loads(reference.to_str())
    meta, pieces, scores = _describe(spec, reference, folder)
    meta["sourceSha256"] = hashlib.sha256(raw).hexdigest()
    meta["protected"] = protected_codepoints()
    meta["tokenizersVersion"] = tokenizers_version()
    meta["unicodeVersion"] = unicodedata.unidata_version
    lean = LeanTokenizer(pieces, array("d", scores), meta)
    mismatches = compare(reference, lean, SELF_CHECK_TEXTS)
    for batch in (SELF_CHECK_TEXTS[:8], SELF_CHECK_TEXTS[8:]):
        mismatches += compare(reference, lean, [batch], batched=True)
    if mismatches:
        raise ConversionError(f"the derived tokenizer disagrees with tokenizers on {len(mismatches)} check texts, "
                              f"first {mismatches[0]!r}")
    try:
        write(target, pieces, scores, meta)
    except OSError as exc:
        if must_write:
            raise
        logger.warning("cannot write %s (%s): the lean tokenizer lives in this process only", target, exc)
    return lean


def _describe(spec: dict[str, Any], reference: Tokenizer, folder: Path) -> tuple[dict[str, Any], list[str], list[float]]:
    model = spec.get("model") or {}
    if model.get("type") != "Unigram" or model.get("byte_fallback") or model.get("unk_id") is None:
        raise ConversionError("the model is not a Unigram without byte fallback with an unk id")
    vocab = model["vocab"]
    pieces = [p for p, _ in vocab]
    scores = [float(s) for _, s in vocab]
    normalizer = spec.get("normalizer") or {}
    steps = normalizer.get("normalizers") if normalizer.get("type") == "Sequence" else None
    if not steps:
        raise ConversionError("the normaliser is not a Sequence")
    meta_steps: list[dict[str, str]] = []
    for step in steps:
        if step.get("type") == "NFKC":
            meta_steps.append({"type": "nfkc"})
        elif step.get("type") == "Replace" and set(step.get("pattern") or {}) <= {"Regex", "String"}:
            meta_steps.append({"type": "replace", "pattern": _python_pattern(step["pattern"]), "content": step["content"]})
        else:
            raise ConversionError(f"unsupported normaliser step {step.get('type')}")
    pre = spec.get("pre_tokenizer") or {}
    if not (pre.get("type") == "Metaspace" and pre.get("replacement") == METASPACE
            and pre.get("prepend_scheme") == "always" and pre.get("split") is True):
        raise ConversionError("the pre-tokeniser is not Metaspace(▁, always, split)")
    specials: dict[str, int] = {}
    for token in spec.get("added_tokens") or []:
        if not token.get("special") or token.get("normalized") or token.get("lstrip") or token.get("rstrip") \
                or token.get("single_word"):
            raise ConversionError(f"added token {token.get('content')!r} is not a plain special token")
        specials[token["content"]] = token["id"]
    if {t.content: i for i, t in reference.get_added_tokens_decoder().items()} != specials:
        raise ConversionError("special_tokens_map.json adds tokens tokenizer.json does not have")
    post = spec.get("post_processor") or {}
    single = post.get("single") or []
    kinds = [next(iter(item)) for item in single]
    if post.get("type") != "TemplateProcessing" or kinds != ["SpecialToken", "Sequence", "SpecialToken"]:
        raise ConversionError("the post-processor is not the `<s> $A </s>` template")
    bos, eos = single[0]["SpecialToken"]["id"], single[2]["SpecialToken"]["id"]
    truncation = reference.truncation or {}
    padding = reference.padding or {}
    if truncation.get("direction") != "right" or truncation.get("stride") or truncation.get("strategy") != "longest_first":
        raise ConversionError(f"unsupported truncation {truncation}")
    if padding.get("direction") != "right" or padding.get("pad_to_multiple_of") or padding.get("length") is not None:
        raise ConversionError(f"unsupported padding {padding}")
    meta: dict[str, Any] = {
        "formatVersion": FORMAT_VERSION, "unkId": int(model["unk_id"]), "bosId": specials[bos], "eosId": specials[eos],
        "padId": int(padding["pad_id"]), "maxLength": int(truncation["max_length"]), "specials": specials,
        "normalizer": meta_steps,
    }
    return meta, pieces, scores


_ONIG_HEX = re.compile(r"\\x\{([0-9a-fA-F]+)\}")


def _python_pattern(pattern: dict[str, str]) -> str:
    """Oniguruma's `\\x{h}` escapes as Python's; the rest of these patterns (classes of
    escapes, ` {2,}`) reads the same in both, and the self-check confirms it."""
    if "String" in pattern:
        return re.escape(pattern["String"])
    return _ONIG_HEX.sub(lambda m: f"\\U{int(m.group(1), 16):08x}", pattern["Regex"])


# Probes for combining classes: a mark of class 1 (U+0334) and one of class 230 (U+0301).
_LOW_MARK, _HIGH_MARK = "\u0334", "\u0301"


def protected_codepoints() -> list[int]:
    """The characters whose NFKC `tokenizers` and Python's `unicodedata` disagree on:
    single characters (mappings), characters next to marks (combining classes) and the
    canonical pairs (compositions). Only the NFKC step is probed: the Replace steps run
    on both sides before it, and the protection applies to NFKC alone."""
    cps = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp < 0xE000]
    found: set[int] = set()
    # 1. single characters
    for i in _nfkc_differences([chr(cp) for cp in cps]):
        found.add(cps[i])
    # 2. combining classes: each mark Python knows, placed around marks of other classes
    marks = [cp for cp in cps if unicodedata.combining(chr(cp))]
    probes = [f"a{chr(cp)}{_LOW_MARK}" for cp in marks] + [f"a{_HIGH_MARK}{chr(cp)}" for cp in marks]
    for i in _nfkc_differences(probes):
        found.add(marks[i % len(marks)])
    # 3. canonical compositions: every two-character canonical decomposition, recomposed
    pairs: list[tuple[int, str]] = []
    for cp in cps:
        decomposition = unicodedata.decomposition(chr(cp))
        if decomposition and not decomposition.startswith("<"):
            parts = [chr(int(h, 16)) for h in decomposition.split()]
            if len(parts) == 2:
                pairs.append((cp, "".join(parts)))
    for i in _nfkc_differences([p for _, p in pairs]):
        found.update(ord(c) for c in pairs[i][1])
        found.add(pairs[i][0])
    return sorted(found)


def _nfkc_differences(probes: list[str]) -> list[int]:
    """Indexes of the probes whose NFKC differs between `tokenizers` and Python; one
    `tokenizers` call, the probes joined by U+0000 (a starter nothing composes with)."""
    from tokenizers import normalizers

    theirs = normalizers.NFKC().normalize_str("\x00".join(probes)).split("\x00")
    if len(theirs) != len(probes):
        raise ConversionError("NFKC changed U+0000")
    return [i for i, (p, t) in enumerate(zip(probes, theirs)) if unicodedata.normalize("NFKC", p) != t]


# ------------------------------------------------------------------- comparison
def compare(reference: Tokenizer, lean: LeanTokenizer, texts: Sequence[Any], *, batched: bool = False) -> list[Any]:
    """Texts (or, `batched`, batches of texts) whose ids or attention masks differ."""
    bad: list[Any] = []
    for item in texts:
        batch = list(item) if batched else [item]
        want = reference.encode_batch(batch)
        got = lean.encode_batch(batch)
        if [(e.ids, e.attention_mask) for e in want] != [(e.ids, e.attention_mask) for e in got]:
            bad.append(item)
    return bad
