"""Sessions: transcript records, conversation summaries and task memory."""
