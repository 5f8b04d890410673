"""The vault's git life: `vb sync`, history and log, personas, export and graphs."""
