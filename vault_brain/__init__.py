"""vault_brain: long-term memory for AI agents kept as a plain Markdown vault."""

__version__ = "0.1.0"
