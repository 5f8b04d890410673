"""`vb serve`: the OpenAI-compatible memory proxy (Starlette on uvicorn, httpx2 upstream)."""
