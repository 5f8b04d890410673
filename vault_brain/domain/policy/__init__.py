"""Policy: settings, lifecycle rules, plans, scopes and grants."""
