"""Chat templates rendered to text, for the scored answer modes: a continuation is scored after the
exact prompt text a chat endpoint would feed the model (system + user + the assistant turn's opening).

``llama_formatter`` reads a loaded llama.cpp model's own template (GGUF metadata, what
``create_chat_completion`` uses); ``chat_renderer`` does the same from a path: a ``.gguf`` file
(loaded vocabulary-only) or a Jinja chat template file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipelines.backends._common import text_messages
from pipelines.backends.base import ChatRequest


def llama_formatter(llm: Any, source: str = "the model") -> Any:
    """llama-cpp-python's Jinja2ChatFormatter for a loaded ``Llama``'s GGUF chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError(f"{source} has no chat template to render prompts with")

    def text_of(token: int) -> str:
        return llm._model.token_get_text(token) if token != -1 else ""

    return Jinja2ChatFormatter(
        template=template, eos_token=text_of(llm.token_eos()), bos_token=text_of(llm.token_bos())
    )


def chat_renderer(path: str | Path) -> Callable[[ChatRequest], str]:
    """A function from a request to its prompt text, with the template of a .gguf or a Jinja file."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"chat template source not found: {file}")
    if file.suffix == ".gguf":
        from llama_cpp import Llama

        llm = Llama(model_path=str(file), vocab_only=True, verbose=False)
        formatter = llama_formatter(llm, file.name)
    else:
        formatter = Jinja2ChatFormatter(template=file.read_text(encoding="utf-8"), eos_token="", bos_token="")

    def render(request: ChatRequest) -> str:
        return formatter(messages=text_messages(request, "openai")).prompt

    return render
