"""``--log-prompts``: every request's full prompt, one JSON line each, in ``prompts.jsonl`` beside
``samples.jsonl``, so an ablation can be checked by reading the two arms' prompts side by side.

A line holds the question id, the arm, the prompt hash (the same as the sample's ``prompt_hash``),
the messages exactly as sent (text parts; media parts as their URLs), the choices a scored answer
mode compared, the graph block and the ids of the facts shown. A resumed run appends only pairs not
logged yet.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROMPTS_FILE = "prompts.jsonl"


class PromptLog:
    """Appends one line per (question, arm) to ``<run dir>/prompts.jsonl``."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / PROMPTS_FILE
        self._seen: set[tuple[str, str]] = set()
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a line cut by a kill: the pair is logged again
                self._seen.add((row.get("question_id", ""), row.get("arm", "")))

    def append(self, question_id: str, arm: str, prepared: Any) -> None:
        """Log the prepared prompt of (question, arm) unless it is logged already."""
        key = (question_id, arm)
        if key in self._seen:
            return
        request = prepared.request
        row = {
            "question_id": question_id,
            "arm": arm,
            "prompt_hash": prepared.prompt_hash,
            "messages": [m.model_dump(mode="json", exclude_none=True) for m in request.messages],
            "choices": request.choices,
            "graph_block": prepared.graph_block,
            "fact_ids": prepared.fact_ids,
        }
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._seen.add(key)
