"""Reader for the "E5S1" packed model file (multilingual-e5-small, 4-bit weights).

Layout (little endian), as documented by the C reader that ships beside the file:

    "E5S1" u32 version
    i32 hidden, layers, heads, ffn, word_vocab, max_positions, type_vocab
    f32 layer_norm_eps, i32 block_size (32)
    i32 n_pieces, bos, eos, pad, unk, u64 blob_len
    u32 offsets[n_pieces + 1], f32 scores[n_pieces], bytes blob[blob_len]   (Unigram vocab)
    i32 n_norm, u32 norm_bytes, then n_norm × (u32 codepoint, u8 n_out, u32 out[n_out])
    i32 n_tensors, then per tensor: u16 name_len, name, u8 dtype (0 f32, 1 Q4_0),
        u32 n_values, u64 offset (from file start), u64 n_bytes

A Q4_0 block is an fp16 scale followed by 16 bytes of nibbles: byte j holds weight j
(low nibble) and weight j + 16 (high nibble); a weight is (nibble - 8) * scale.
The position table is stored already shifted, so position ids start at 0.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
BLOCK = 32
Q4_DTYPE = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
DTYPE_F32 = 0
DTYPE_Q4 = 1


class E5S1FormatError(ValueError):
    pass


@dataclass
class Tensor:
    name: str
    dtype: int
    count: int
    offset: int
    nbytes: int


@dataclass
class E5S1:
    hidden: int
    layers: int
    heads: int
    ffn: int
    word_vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]
    tensors: dict[str, Tensor] = field(default_factory=dict)
    _buf: memoryview | None = None

    # -- tensors -------------------------------------------------------------------
    def _buffer(self) -> memoryview:
        if self._buf is None:
            raise E5S1FormatError("the model was not read from a file (no tensor data)")
        return self._buf

    def _tensor(self, name: str) -> Tensor:
        try:
            return self.tensors[name]
        except KeyError:
            raise E5S1FormatError(f"tensor {name!r} missing from the model file") from None

    def f32(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        t = self._tensor(name)
        if t.dtype != DTYPE_F32:
            raise E5S1FormatError(f"tensor {name!r} is not float32")
        arr = np.frombuffer(self._buffer(), dtype="<f4", count=t.count, offset=t.offset)
        return arr.reshape(shape)

    def q4_blocks(self, name: str, rows: int, cols: int) -> np.ndarray:
        """The raw Q4_0 blocks of a [rows, cols] weight: shape [rows, cols // 32]."""
        t = self._tensor(name)
        if t.dtype != DTYPE_Q4 or t.count != rows * cols or cols % BLOCK:
            raise E5S1FormatError(f"tensor {name!r} is not a Q4 [{rows}, {cols}] matrix")
        arr = np.frombuffer(self._buffer(), dtype=Q4_DTYPE, count=t.count // BLOCK, offset=t.offset)
        return arr.reshape(rows, cols // BLOCK)

    def q4_dequant(self, name: str, rows: int, cols: int) -> np.ndarray:
        return dequant_blocks(self.q4_blocks(name, rows, cols)).reshape(rows, cols)


def dequant_blocks(blocks: np.ndarray) -> np.ndarray:
    """[..., nb] Q4_0 blocks -> [..., nb * 32] float32."""
    qs = blocks["qs"]
    lo = (qs & 0x0F).astype(np.float32)
    hi = (qs >> 4).astype(np.float32)
    nib = np.concatenate([lo, hi], axis=-1) - 8.0  # [..., nb, 32]
    scale = blocks["d"].astype(np.float32)[..., None]
    out = nib * scale
    return out.reshape(*blocks.shape[:-1], blocks.shape[-1] * BLOCK)


class _Cursor:
    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.pos = 0

    def _unpack(self, fmt: str) -> tuple[int | float, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise E5S1FormatError("model file is truncated")
        values: tuple[int | float, ...] = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return values

    def take(self, fmt: str) -> tuple[int, ...]:
        """The values of an integer-only `fmt` (several fields)."""
        return tuple(int(v) for v in self._unpack(fmt))

    def take_int(self, fmt: str) -> int:
        (value,) = self.take(fmt)
        return value

    def take_float(self, fmt: str) -> float:
        (value,) = self._unpack(fmt)
        return float(value)

    def array(self, dtype: str, count: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize * count
        if self.pos + size > len(self.buf):
            raise E5S1FormatError("model file is truncated")
        arr = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos)
        self.pos += size
        return arr

    def raw(self, n: int) -> bytes:
        if self.pos + n > len(self.buf):
            raise E5S1FormatError("model file is truncated")
        data = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return data


def read_e5s1(path: Path | str) -> E5S1:
    data = Path(path).read_bytes()
    buf = memoryview(data)
    if len(data) < 8 or data[:4] != MAGIC:
        raise E5S1FormatError(f"{path}: not an E5S1 model file (bad magic)")
    c = _Cursor(buf)
    c.pos = 4
    c.take_int("<I")  # version
    hidden, layers, heads, ffn, word_vocab, max_pos, type_vocab = c.take("<7i")
    eps = c.take_float("<f")
    block = c.take_int("<i")
    if block != BLOCK:
        raise E5S1FormatError(f"unsupported Q4 block size {block}")
    n_pieces, bos, eos, pad, unk = c.take("<5i")
    blob_len = c.take_int("<Q")
    offsets = c.array("<u4", n_pieces + 1)
    scores = c.array("<f4", n_pieces).astype(np.float64)
    blob = c.raw(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm = c.take_int("<i")
    norm_bytes = c.take_int("<I")
    norm_raw = c.raw(norm_bytes)
    norm_map: dict[int, str] = {}
    p = 0
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", norm_raw, p)
        p += 5
        outs = struct.unpack_from(f"<{n_out}I", norm_raw, p)
        p += 4 * n_out
        norm_map[cp] = "".join(chr(o) for o in outs)
    model = E5S1(
        hidden=hidden, layers=layers, heads=heads, ffn=ffn, word_vocab=word_vocab, max_positions=max_pos,
        type_vocab=type_vocab, eps=float(eps), pieces=pieces, scores=scores, bos=bos, eos=eos, pad=pad,
        unk=unk, norm_map=norm_map, _buf=buf,
    )
    n_tensors = c.take_int("<i")
    for _ in range(n_tensors):
        name_len = c.take_int("<H")
        name = c.raw(name_len).decode("ascii")
        dtype = c.take_int("<B")
        count = c.take_int("<I")
        offset, nbytes = c.take("<QQ")
        if offset + nbytes > len(data):
            raise E5S1FormatError(f"tensor {name!r} points past the end of the file")
        model.tensors[name] = Tensor(name, dtype, count, offset, nbytes)
    if hidden % heads or hidden % BLOCK or ffn % BLOCK:
        raise E5S1FormatError("inconsistent model dimensions")
    return model
