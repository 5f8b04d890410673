"""Notes on disk: reading, front-matter editing, three-way merges, the vault template."""
