"""Sync: merging two machines' work, and what a remote may not bring."""
