"""Pure domain logic: values in, values out, no files, no network, no heavy libraries.

Credit math, ranking, the policy model, note identity rules, text rules, capture, planning
data and the offline summary, merge and fact engines live here. Everything above (storage,
application, interfaces) may import it; it imports nothing of theirs.
"""
