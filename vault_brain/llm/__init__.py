"""LLM-backed steps behind a small adapter over an OpenAI-compatible Chat Completions endpoint.

Importing this package never imports the `openai` SDK; only a call that talks to the endpoint does.
"""

from __future__ import annotations

from vault_brain.llm.adapter import (
    LLM,
    ChatReply,
    LLMConfig,
    LLMError,
    ToolCall,
    Usage,
    load_llm_config,
)
from vault_brain.llm.tasks import (
    METHOD_LLM,
    METHOD_OFFLINE,
    Fact,
    JSONChat,
    MergedText,
    Summary,
    extract_facts,
    merge_episodes,
    summarize,
)

__all__ = [
    "LLM",
    "METHOD_LLM",
    "METHOD_OFFLINE",
    "ChatReply",
    "Fact",
    "JSONChat",
    "LLMConfig",
    "LLMError",
    "MergedText",
    "Summary",
    "ToolCall",
    "Usage",
    "extract_facts",
    "load_llm_config",
    "merge_episodes",
    "summarize",
]
