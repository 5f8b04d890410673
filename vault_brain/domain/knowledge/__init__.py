"""Knowledge: items extracted from a project's files, and what a search covers."""
