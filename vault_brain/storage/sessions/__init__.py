"""Session transcripts and tasks.json on disk."""
