"""Sessions: the agent loop's stages, flush, compaction, retention and tasks."""
