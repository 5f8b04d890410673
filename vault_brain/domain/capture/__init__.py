"""Capture: which statements of a conversation become memory, and which facts they update."""
