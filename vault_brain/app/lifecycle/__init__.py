"""The lifecycle: consolidation, promotion, pruning, `vb doctor`, agent-written policy."""
