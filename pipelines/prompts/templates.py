"""Versioned, hashed prompt templates.

A template is one YAML file in this folder. Its ``version`` is bumped by hand on any edit, and its
``sha256`` is computed from the file bytes, so a run log can prove which wording produced an answer
even if someone forgot to bump the version.
"""

from __future__ import annotations

import hashlib
import string
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from karma.core.errors import InputError

TEMPLATE_DIR = Path(__file__).parent
DEFAULT_LLM_TEMPLATE = "mcq_llm_v1"
DEFAULT_VLM_TEMPLATE = "mcq_vlm_v1"


class PromptTemplate(BaseModel):
    """One prompt wording: system text, user text with placeholders, and the graph block."""

    model_config = ConfigDict(frozen=True, extra="allow")

    name: str
    """Template family (``mcq_llm``, ``mcq_vlm``)."""
    version: str
    """Hand-bumped version string of the wording."""
    system: str
    """System message (identical with the graph on and off)."""
    user: str
    """User message with ``{placeholders}``; ``{graph_block}`` is empty when the graph is off."""
    graph_block: str
    """The causal-knowledge block inserted for ``{graph_block}`` when the graph is on (``{facts}``)."""
    no_facts: str = "- none found"
    """Fact text used when the graph is on but retrieval found nothing (the block is still shown)."""
    answer_modes: dict[str, dict[str, str]] = {}
    """Answer mode (generate, letter, loglik) -> ``format`` (fills ``{answer_format}`` in the system
    text) and ``request`` (fills ``{answer_request}`` in the user text). A template without it
    supports only ``generate`` with its texts as written."""
    sha256: str = ""
    """sha256 of the template file bytes (filled by the loader)."""
    source: str = ""
    """Where the template was loaded from."""

    def placeholders(self) -> set[str]:
        """Names used in the user text (checked against what the pipeline fills)."""
        return {name for _, name, _, _ in string.Formatter().parse(self.user) if name}

    def render_graph_block(self, fact_lines: list[str]) -> str:
        """The block for a graph-on prompt; retrieval finding nothing still yields a (stated) block."""
        facts = "\n".join(fact_lines) if fact_lines else self.no_facts
        return self.graph_block.format(facts=facts)

    def answer_texts(self, mode: str = "generate") -> dict[str, str]:
        """``{"format", "request"}`` of an answer mode; an unknown or missing mode is an error."""
        if not self.answer_modes:
            if mode != "generate":
                raise ValueError(
                    f"template {self.source or self.name} has no answer_modes; only generate works"
                )
            return {"format": "", "request": ""}
        texts = self.answer_modes.get(mode)
        if texts is None:
            raise ValueError(
                f"template {self.source or self.name} has no answer mode {mode!r} "
                f"(it has {', '.join(sorted(self.answer_modes))})"
            )
        return texts

    def system_for(self, mode: str = "generate") -> str:
        """The system text with the answer mode's format instruction."""
        return self.system.replace("{answer_format}", self.answer_texts(mode).get("format", ""))

    def text(self, key: str) -> str:
        """An extra string field of the template (``masked_value``, ``audio_note_masked``...)."""
        value = (self.model_extra or {}).get(key)
        if not isinstance(value, str):
            raise KeyError(f"template {self.source or self.name} has no string field {key!r}")
        return value


def template_path(name_or_path: str | Path) -> Path:
    """Resolve a packaged template name (``mcq_llm_v1``) or a path to a YAML file."""
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"}:
        return candidate
    packaged = TEMPLATE_DIR / f"{name_or_path}.yaml"
    if not packaged.exists():
        known = ", ".join(sorted(p.stem for p in TEMPLATE_DIR.glob("*.yaml")))
        raise FileNotFoundError(f"unknown prompt template {name_or_path!r}; packaged ones: {known}")
    return packaged


@cache
def _load(path: Path) -> PromptTemplate:
    raw = path.read_bytes()
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise InputError(
            f"{path}: not a valid YAML prompt template{line}: {getattr(exc, 'problem', exc)}"
        ) from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: a prompt template must be a YAML mapping")
    for field in ("name", "version", "system", "user", "graph_block"):
        if not isinstance(data.get(field), str):
            raise InputError(f"{path}: field {field!r} is missing or not a string")
    if "{graph_block}" not in data["user"]:
        raise InputError(f"{path}: the user text must contain {{graph_block}} (the only ablation switch)")
    if "{facts}" not in data["graph_block"]:
        raise InputError(f"{path}: graph_block must contain {{facts}}")
    return PromptTemplate(**data, sha256=hashlib.sha256(raw).hexdigest(), source=str(path))


def load_template(name_or_path: str | Path = DEFAULT_LLM_TEMPLATE) -> PromptTemplate:
    """Load (and cache) a template by packaged name or YAML path."""
    return _load(template_path(name_or_path).resolve())
