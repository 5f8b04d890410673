"""The LLM endpoint: configuration, the `openai` client, and the shapes of its replies."""
