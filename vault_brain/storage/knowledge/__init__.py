"""Extracted items on disk and a project's own files."""
