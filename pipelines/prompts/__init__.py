"""Prompt templates (versioned YAML files, hashed) and the scene-features text shown to models."""

from pipelines.prompts.features_text import (
    AUDIO_KEYS,
    VISUAL_KEYS,
    features_lines,
    features_text,
    is_audio_key,
)
from pipelines.prompts.templates import (
    DEFAULT_LLM_TEMPLATE,
    DEFAULT_VLM_TEMPLATE,
    TEMPLATE_DIR,
    PromptTemplate,
    load_template,
    template_path,
)

__all__ = [
    "AUDIO_KEYS",
    "DEFAULT_LLM_TEMPLATE",
    "DEFAULT_VLM_TEMPLATE",
    "TEMPLATE_DIR",
    "VISUAL_KEYS",
    "PromptTemplate",
    "features_lines",
    "features_text",
    "is_audio_key",
    "load_template",
    "template_path",
]
