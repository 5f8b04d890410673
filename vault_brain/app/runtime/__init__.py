"""Long-running processes, composed here: the proxy, the index keeper, `vb watch`, `vb session`."""
