"""The memory core every feature shares: the vault object, notes, credit, the gate, results."""
