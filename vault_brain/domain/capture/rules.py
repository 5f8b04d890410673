"""The questions capture asks the rule table (capture/table.py): which identity slot a clause
fills, whether it states a preference, a decision or a dated plan. Each is a thin function
over the table's slots; the patterns, their examples and counter-examples are in the table.
"""

from __future__ import annotations

from vault_brain.domain.capture import words as words
from vault_brain.domain.capture.clauses import strip_fillers, strip_label
from vault_brain.domain.capture.engine import find, hits, value
from vault_brain.domain.lazy_re import lazy

# ---------------------------------------------------------------------------------------
# identity


def is_identity(core: str) -> bool:
    """Whether a clause says who the user is: a slot below, or a nationality."""
    return identity_slot(core) is not None or hits("identity:nationality", core)


def identity_slot(core: str) -> str | None:
    """Which identity slot a clause about the user fills: name, role, employer or location
    (None for an identity fact that is not exclusive, such as a nationality)."""
    if hits("identity:nationality", core):
        return None
    name = find("identity:name", core)
    if name and _real_name(value(name)):
        return "identity:name"
    if hits("identity:role", core) or (
        hits("identity:role/bare", core) and len(core.split()) <= 14
    ):
        return "identity:role"
    if hits("identity:employer", core):
        return "identity:employer"
    if hits("identity:location", core) and not hits("identity:location/not", core):
        return "identity:location"
    return None


def business(core: str) -> str | None:
    """The name of a business the clause says the user runs or owns, if any."""
    match = find("identity:business", core)
    if match is None:
        return None
    name = value(match)
    return name if _real_name(name) else None


_JOB_WORD = lazy(rf"(?i:{words.JOB})s?")


def _real_name(raw: str) -> bool:
    """Not a function word, and not a job ("Chef here" is a role, not a name)."""
    parts = raw.split()
    return (
        bool(parts)
        and parts[0] not in words.NOT_NAMES
        and parts[-1] not in words.NOT_NAMES
        and not (len(parts) == 1 and _JOB_WORD.fullmatch(parts[0]))
    )


# ---------------------------------------------------------------------------------------
# preferences


def is_preference(core: str) -> bool:
    """A stable like, dislike, habit, diet or way the user wants answers written."""
    if hits("preference/not", core):
        return False
    if hits("preference", core):
        return True
    style = hits("preference/style", core)
    if style and hits("preference/style-only", core):
        return True
    if hits("preference/diet", core) and hits("preference/first-person", core):
        return True
    if hits("preference/no-style", core):
        return True
    durable = hits("preference/durable", core)
    if hits("preference/one-off", core) and not durable:
        return False
    if style and hits("preference/standing", core):
        return True
    return ((style or durable) and hits("preference/ask", core)) or (style and durable)


def is_style_request(clause: str) -> bool:
    """ "Could you write in bigger letters?": a question that states a working preference."""
    if hits("preference/not", clause):
        return False
    if hits("preference/one-off", clause) and not hits("preference/durable", clause):
        return False
    return (
        hits("preference/style", clause)
        and hits("preference/ask", clause)
        and not hits("preference/wh", clause)
    )


# ---------------------------------------------------------------------------------------
# decisions and dated events


def is_decision(clause: str) -> bool:
    """A choice taken or agreed ("we decided...", "let's...", "X it is", "no X at Y")."""
    core = strip_label(strip_fillers(clause))
    if len(core.split()) < 2 or hits("decision/not", clause):
        return False
    if hits("decision/short", core):
        return True
    if len(core.split()) < 3:
        return False
    return hits("decision", clause) or hits("decision/it-is", core) or hits("decision/rule", core)


def decides_about_other(core: str) -> bool:
    """A relative-clause decision whose subject is the thing named before "which"."""
    return hits("decision/about-other", core)


def has_date(clause: str) -> bool:
    """A calendar reference that dates a plan or an event (not "last year ...": a story, nor
    "I'll book it tomorrow": a to-do about the thing at hand)."""
    return (
        hits("event", clause)
        and not hits("event/past", clause)
        and not hits("event/todo", strip_fillers(clause))
    )
