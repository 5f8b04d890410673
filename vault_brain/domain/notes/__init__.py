"""The note model and what is computed from a note: credit, merges, substance, ranking."""
