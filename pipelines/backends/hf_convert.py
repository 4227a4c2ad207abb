"""Convert a GGUF once into a normal Hugging Face safetensors folder, cached on disk.

transformers 5.x can read a GGUF (it dequantises to fp32, chat template included) but parses the
file twice and needs ``accelerate``: about 10 s for SmolLM2-135M on 2 cores. Saving the dequantised
model as safetensors once makes later loads take well under a second. The cache entry is keyed by the
GGUF's SHA-256, written to a temporary folder and renamed into place, under a file lock so that
parallel processes convert only once.
"""

from __future__ import annotations

import fcntl
import shutil
import tempfile
from pathlib import Path

from pipelines.models import cache_dir, file_sha256

_DONE = ".karma-converted"


def converted_gguf_dir(gguf_path: str | Path, cache_root: str | Path | None = None) -> Path:
    """The cached safetensors folder for ``gguf_path``, converting it first if needed."""
    gguf = Path(gguf_path).resolve()
    if not gguf.is_file():
        raise FileNotFoundError(f"GGUF model not found: {gguf}")
    root = Path(cache_root) if cache_root else cache_dir() / "hf-from-gguf"
    target = root / f"{gguf.stem}-{file_sha256(gguf)[:16]}"
    if (target / _DONE).is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be converting the same file
        if (target / _DONE).is_file():
            return target
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
        try:
            _convert(gguf, tmp)
            (tmp / _DONE).write_text(str(gguf) + "\n")
            tmp.chmod(0o755)  # mkdtemp makes it private; the cache is meant to be shared
            if target.exists():  # a broken earlier attempt without the marker
                shutil.rmtree(target)
            tmp.rename(target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        import accelerate  # noqa: F401  (transformers needs it to load GGUF weights)
    except ImportError as exc:
        raise ImportError("converting a GGUF with transformers needs `accelerate` installed") from exc
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # The weights are already dequantised; drop the GGUF quantisation marks so that
    # save_pretrained writes (and from_pretrained later reads) a plain fp32 model.
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.hf_quantizer = None
    model.is_quantized = False
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
