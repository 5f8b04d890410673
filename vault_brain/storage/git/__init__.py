"""The vault as a git repository (GitPython): commits, locks, history, personas, sync."""
