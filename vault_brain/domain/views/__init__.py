"""Views of the vault for people: a note's history, exports and Mermaid graphs."""
