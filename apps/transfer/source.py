"""Reading an import directory without trusting it.

Every file is found by walking the directory without following links; a symbolic link
anywhere inside, or a file resolving outside the directory, is refused. Text must be
UTF-8; JSON Lines shards must end with a line break (a last line without one is a
truncated copy). Every problem is an `ImportFileError` naming the file and the line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class ImportFileError(Exception):
    """A problem of one input file; `line` 0 means the file as a whole."""

    def __init__(self, path: str, line: int, message: str):
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


class SourceDir:
    def __init__(self, root: Path):
        if root.is_symlink():
            raise ImportFileError(str(root), 0, "the import directory is a symbolic link; give the real directory")
        if not root.is_dir():
            raise ImportFileError(str(root), 0, "not a directory")
        self.root = root.resolve()
        self._files: set[str] = set()
        self._dirs: set[str] = {""}
        for current, dirnames, filenames in os.walk(self.root, followlinks=False):
            base = Path(current)
            for name in dirnames + filenames:
                path = base / name
                relative = path.relative_to(self.root).as_posix()
                if path.is_symlink():
                    raise ImportFileError(relative, 0, f"is a symbolic link (to {os.readlink(path)!r}); links are never followed")
                real = Path(os.path.realpath(path))
                if real != self.root and self.root not in real.parents:
                    raise ImportFileError(relative, 0, "resolves outside the import directory")
                if name in dirnames:
                    self._dirs.add(relative)
                elif path.is_file():
                    self._files.add(relative)

    def has_dir(self, relative: str) -> bool:
        return relative.strip("/") in self._dirs

    def has_file(self, relative: str) -> bool:
        return relative in self._files

    def files_under(self, folder: str, suffix: str = "") -> list[str]:
        """Files directly in `folder`, sorted by name."""
        prefix = folder.rstrip("/") + "/"
        return sorted(f for f in self._files if f.startswith(prefix) and "/" not in f[len(prefix):] and f.endswith(suffix))

    def tree_under(self, folder: str) -> list[str]:
        prefix = folder.rstrip("/") + "/"
        return sorted(f for f in self._files if f.startswith(prefix))

    def path(self, relative: str) -> Path:
        return self.root / relative

    def read_bytes(self, relative: str) -> bytes:
        return self.path(relative).read_bytes()

    def read_text(self, relative: str) -> str:
        return decode_utf8(relative, self.read_bytes(relative))

    def read_json(self, relative: str) -> Any:
        text = self.read_text(relative)
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportFileError(relative, exc.lineno, f"not valid JSON: {exc.msg}") from None

    def read_jsonl(self, relative: str) -> Iterator[tuple[int, Any]]:
        """(line number, value) of each non-blank line."""
        data = self.read_bytes(relative)
        decode_utf8(relative, data)
        yield from jsonl_values(relative, data)


def decode_utf8(relative: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ImportFileError(relative, line, f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def check_complete(relative: str, data: bytes) -> None:
    if data and not data.endswith(b"\n"):
        line = data.count(b"\n") + 1
        raise ImportFileError(relative, line, "the last line has no line break: the file is truncated (or was copied while being written)")


def jsonl_values(relative: str, data: bytes) -> Iterator[tuple[int, Any]]:
    check_complete(relative, data)
    for number, raw in enumerate(data.split(b"\n")[:-1] if data else [], start=1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ImportFileError(relative, number, f"not valid JSON: {getattr(exc, 'msg', exc)}") from None
