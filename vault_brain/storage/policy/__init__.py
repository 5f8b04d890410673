"""Machine-local trust: policy files and approvals, held settings, the machine key, serve tokens."""
