"""How a chat clause becomes a stored statement, for offline capture: who its subject is
("I", "we", "it"), the first-person opening put in the third person ("I'm a nurse" ->
"User is a nurse"), and back again so a stored statement can be read by the same rules;
and what a clause says of an event or a piece of work (whose event it is, a milestone, the
stack).
"""

from __future__ import annotations

import re

from vault_brain.domain.capture.clauses import strip_label
from vault_brain.domain.capture.engine import hits
from vault_brain.domain.capture.words import DATE, DEADLINE


def starts_first_person(core: str) -> bool:
    """The clause's subject is the user ("I...", "we...", "my flat...", "Ana and I...")."""
    return hits("says:first-person", strip_label(core))


def starts_singular(core: str) -> bool:
    """The clause's subject is the user alone ("I've decided...", not "we" or "let's")."""
    return hits("says:singular", strip_label(core))


def continues_subject(core: str) -> bool:
    """ "It runs on X" / "runs on X": a clause whose subject is the thing just named."""
    return hits("says:continues", core)


def with_subject(core: str, name: str) -> str:
    """The clause with its pronoun or missing subject replaced by the name."""
    for pattern, repl in ((r"^(?:it's|it’s)\b", f"{name} is"), (r"^its\b", f"{name}'s")):
        if re.match(pattern, core, re.IGNORECASE):
            return re.sub(pattern, repl, core, count=1, flags=re.IGNORECASE)
    if re.match(r"^it\b", core, re.IGNORECASE):
        return name + core[2:]
    return f"{name} {core}"


_THIRD = [
    (re.compile(r"^(?:i'?m|i’m|im|i am)\b", re.I), "User is"),
    (re.compile(r"^(?:i'?ve|i’ve|i have)\b", re.I), "User has"),
    (re.compile(r"^(?:i'?d|i’d|i would)\b", re.I), "User would"),
    (re.compile(r"^(?:i'?ll|i’ll|i will)\b", re.I), "User will"),
    (re.compile(r"^i\s+(?:don't|do not)\b", re.I), "User doesn't"),
    (re.compile(r"^my\s+name(?:'s|\s+is)\b", re.I), "User's name is"),
    (re.compile(r"^call\s+me\b", re.I), "User goes by"),
]
# an adverb between "I" and the verb ("I now use X" -> "User now uses X", not "User nows use")
_ADVERB = (
    r"never|always|really|also|only|usually|mostly|just|still|generally|normally|now|often"
    r"|sometimes|rarely|seldom|already|even"
)
_MODAL = re.compile(rf"^i\s+(can't|cannot|can|could|should|must|was|{_ADVERB})\b", re.IGNORECASE)
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_NO_S = {"can", "can't", "cannot", "could", "should", "must", "was", "a", "an", "the", "not"}
# irregular past tenses ("I left X" -> "User left X", not "User lefts X")
_PAST = {
    "left", "quit", "went", "took", "got", "began", "drank", "came", "became", "bought", "sold",
    "made", "found", "ran", "met", "gave", "won", "lost", "built", "kept", "spent", "sent",
    "said", "told", "thought", "felt", "knew", "saw", "wrote", "chose", "swore", "grew",
}  # fmt: skip


def third_person(core: str) -> str:
    """A first-person opening in the third person ("I'm a nurse" -> "User is a nurse",
    "I really dislike X" -> "User really dislikes X"), and the rest of that statement with
    it ("User wants to tidy up their CV", not "... my CV"); other clauses unchanged."""
    said = _opening(core)
    if not said.startswith("User") or core.startswith("User"):
        return said
    return said[:4] + _LATER_FIRST.sub(lambda m: _THEY[m.group(0).lower()], said[4:])


# the user's own words after the opening, in the third person
_THEY = {
    "my": "their", "mine": "theirs", "myself": "themselves", "me": "them", "i'm": "they're",
    "i've": "they've", "i'll": "they'll", "i'd": "they'd", "i": "they",
}  # fmt: skip
_LATER_FIRST = re.compile(r"\b(?:my|mine|myself|me|i'm|i've|i'll|i'd|i)\b(?!['’-]\w)", re.I)


def _opening(core: str) -> str:
    text = core[:1].upper() + core[1:]
    for pattern, repl in _THIRD:
        if pattern.match(text):
            return pattern.sub(repl, text, count=1)
    modal = _MODAL.match(text)
    if modal:
        word = modal.group(1)
        rest = text[modal.end() :]
        follow = re.match(r"\s+(\w+)\b", rest)
        if word.lower() in _NO_S or not follow or follow.group(1).lower() in _NO_S:
            return f"User {word}{rest}"
        return f"User {word} {_s_form(follow.group(1))}{rest[follow.end() :]}"
    verb = re.match(r"^i\s+(?:(\w+ly)\s+)?(\w+)\b", text, re.IGNORECASE)
    if verb:  # "I finally switched" -> "User finally switched"
        adverb = f"{verb.group(1)} " if verb.group(1) else ""
        return f"User {adverb}{_s_form(verb.group(2))}{text[verb.end() :]}"
    return text


def _s_form(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith(("ed", "s")) or lower in _NO_S or lower in _PAST:
        return verb
    if re.search(r"(?:sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


_FIRST = [
    (re.compile(r"^User's name is\b"), "my name is"),
    (re.compile(r"^User goes by\b"), "I go by"),
    (re.compile(r"^User is\b"), "I'm"),
    (re.compile(r"^User has\b"), "I've"),
    (re.compile(r"^User would\b"), "I'd"),
    (re.compile(r"^User will\b"), "I'll"),
    (re.compile(r"^User doesn't\b"), "I don't"),
]


_BASE = {"has": "have", "does": "do", "goes": "go", "is": "am"}


def first_person(text: str) -> str:
    """A stored third-person statement back in the first person ("User leads X" -> "I lead
    X", "User grades for their class" -> "I grade for my class"), so the slot rules written
    for chat apply to it."""
    if text.startswith("User") and _first_opening(text) != text:
        text = text[:4] + _LATER_THEY.sub(lambda m: _I[m.group(0).lower()], text[4:])
    return _first_opening(text)


_I = {v: k for k, v in _THEY.items()} | {"they": "I", "they're": "I'm"}
_LATER_THEY = re.compile(
    r"\b(?:their|theirs|themselves|them|they're|they've|they'll|they'd|they)\b(?!['’-]\w)",
    re.I,
)


def _first_opening(text: str) -> str:
    for pattern, repl in _FIRST:
        if pattern.match(text):
            return pattern.sub(repl, text, count=1)
    match = re.match(rf"^User\s+(?:([a-z]+ly|{_ADVERB})\s+)?(\w+)\b", text)
    if not match:
        return text
    verb = match.group(2)
    if verb in _BASE:  # "User usually has" -> "I usually have"
        verb = _BASE[verb]
    elif verb.endswith("ies"):
        verb = verb[:-3] + "y"
    elif re.search(r"(?:ch|sh|x|z|o)es$", verb):
        verb = verb[:-2]
    elif verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-1]
    adverb = f"{match.group(1)} " if match.group(1) else ""
    return f"I {adverb}{verb}{text[match.end() :]}"


# ---------------------------------------------------------------------------------------
# what an event or a piece of work says


def wants_user(core: str) -> bool:
    """Someone wants the user somewhere ("my boss wants me at the fair"): the user's event."""
    return hits("says:wants-me", core)


def asks_by_date(core: str) -> bool:
    """Someone asks for work by a date ("wants results by the group meeting on 6 June")."""
    return hits("says:asks-for", core) and bool(
        DEADLINE.search(core) or hits("says:by-event", core)
    )


def is_stack_or_status(core: str) -> bool:
    """Stack, users, release or deadline: what is said of a product or piece of work."""
    return hits("says:stack", core)


def starts_with_date(core: str) -> bool:
    """A clause that opens with its date and has no subject ("Saturday 17 May, at the hall")."""
    match = DATE.match(strip_label(core))
    return bool(match)


def is_milestone(core: str) -> bool:
    """Status, stack or size of a piece of work ("release", "ships", "v2.1", "budget")."""
    return hits("says:status", core)


def is_project_status(core: str) -> bool:
    """A milestone, the stack, or anything dated, about a piece of work."""
    return hits("says:status", core) or bool(DATE.search(core)) or hits("says:uses", core)
