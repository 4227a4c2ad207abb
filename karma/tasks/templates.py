"""Versioned, hashed prompt templates of the registered tasks (``karma/tasks/prompts/*.yaml``).

As for Karma-MV's templates, the ``version`` is bumped by hand on any edit and the ``sha256`` of the
file bytes goes into every run's config.json, so a wording change is never mixed silently.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from karma.core.errors import InputError

PROMPT_DIR = Path(__file__).parent / "prompts"


class TaskTemplate(BaseModel):
    """One wording: a system prompt and a user prompt with ``{question}`` and ``{options}``."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Template family and arm (``wildscore/image``)."""
    version: str
    """Hand-bumped version (``wildscore-paper-v1``)."""
    system: str
    """System prompt (verbatim from the paper where the paper gives one)."""
    user: str
    """User prompt with ``{question}`` and ``{options}``."""
    option_line: str = "{letter}. {text}"
    """How one option is written."""
    option_separator: str = "\n"
    """What joins the option lines."""
    source: str = ""
    """Where the wording comes from (paper section) or ``karma`` when it is karma's own."""
    sha256: str = ""
    """sha256 of the YAML file bytes (filled on load)."""

    def options_text(self, options: dict[str, str], upper: bool) -> str:
        return self.option_separator.join(
            self.option_line.format(letter=k.upper() if upper else k, text=v) for k, v in options.items()
        )

    def render_user(self, question: str, options: dict[str, str], upper: bool) -> str:
        return self.user.format(question=question, options=self.options_text(options, upper))


@cache
def load_task_template(file_name: str, arm: str) -> TaskTemplate:
    """The ``arm`` section of ``karma/tasks/prompts/<file_name>.yaml``."""
    path = PROMPT_DIR / f"{file_name}.yaml"
    raw = path.read_bytes()
    payload = yaml.safe_load(raw)
    arms = payload.get("arms", {})
    if arm not in arms:
        raise InputError(f"{path}: no arm {arm!r} (has {', '.join(arms)})")
    section = {k: v for k, v in payload.items() if k not in ("arms", "name")} | arms[arm]
    return TaskTemplate(name=f"{payload['name']}/{arm}", sha256=hashlib.sha256(raw).hexdigest(), **section)
