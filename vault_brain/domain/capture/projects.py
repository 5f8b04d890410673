"""Projects named in a clause, for offline capture: a named piece of work ("project X", "the
X service", "a game called X", "codename X", "I maintain x, a small library", "I call it X",
"we're calling that fund 'X'", "service is X — our backend", "putting on X"); names of
organisations ("a bakery called X"), people and pets are told apart by their noun.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault_brain.domain.capture.clauses import split_clauses, strip_fillers
from vault_brain.domain.capture.names import clean_name
from vault_brain.domain.capture.words import (
    NAME_SEQ,
    NAME_WORD,
    ORG_NOUN,
    PERSON_NOUN,
    RELATION,
    UPPER,
    WORK_NOUN,
)
from vault_brain.domain.lazy_re import lazy
from vault_brain.domain.text import STOPWORDS, content_words


@dataclass(frozen=True)
class Naming:
    name: str
    head: str  # the noun it is a name of ("service", "game"), lower case, "" if unknown
    anaphoric: bool  # "it's called X", "the project is called X": described before


_QUOTED = rf"['\"‘“](?P<quoted>[{UPPER}0-9][\w .&+-]{{0,30}}?)['\"’”]"
# A noun that names a person, a pet or a business, not a piece of work.
_NOT_THING = (
    rf"(?!(?i:{RELATION}|{PERSON_NOUN}|{ORG_NOUN}|dog|cat|puppy|kitten|pet|horse|rabbit|bird|parrot"
    r"|hamster|tortoise|snake|fish)\b)"
)
_NAMINGS = (
    lazy(rf"\b(?i:project)\s+(?P<name>{NAME_SEQ})"),
    lazy(rf"\b(?P<name>{NAME_SEQ})\s+(?P<head>(?i:project))\b"),
    lazy(
        rf"\b(?i:the|our|my|a|an|this)\s+(?:[\w'’-]+\s+){{0,3}}?(?P<head>(?i:{WORK_NOUN}))"
        rf"(?P<is>['’]s|\s+is)?,?\s+(?i:codenamed?|code-named|code\s+name|called|named|titled"
        rf"|working\s+title)\s+(?P<name>{NAME_SEQ})"
    ),
    lazy(rf"\b(?i:codenamed?|code-named|code\s+name|working\s+title)\s+(?P<name>{NAME_SEQ})"),
    lazy(
        rf"\b(?i:the|our|my|a|an)\s+(?:[\w'’-]+\s+){{0,4}}?(?P<head>(?i:{WORK_NOUN})),\s+"
        rf"(?P<name>{NAME_SEQ}),"
    ),
    lazy(
        rf"^(?P<name>{NAME_SEQ})\s+(?:(?i:is|was)\s+(?i:written|built|developed|hosted|deployed"
        r"|implemented|coded)\s+(?i:in|with|on)|(?i:runs\s+on))\b"
    ),
    lazy(rf"\b(?P<name>{NAME_WORD})\s+v\d+(?:\.\d+)*\b"),
    lazy(
        rf"\b(?P<name>{NAME_SEQ}),\s+(?i:our|my|the|a|an)\s+(?:[\w'’-]+\s+){{0,3}}?"
        rf"(?P<head>(?i:{WORK_NOUN}))\b"
    ),
    lazy(
        rf"\b(?i:we|i)(?:'ll|\s+will|'re\s+going\s+to|\s+are\s+going\s+to|'ve\s+been|'re|\s+are|'m|\s+am)?"
        rf"\s+(?i:call|name|calling|naming)\s+(?:(?P<is>(?i:it|that|this))\s+|(?i:the|our|my)\s+)?"
        rf"(?:(?P<head>(?i:{WORK_NOUN}))\s+|{_NOT_THING}[a-z]+\s+)?(?:{_QUOTED}|(?P<name>{NAME_SEQ}))"
    ),
    lazy(
        rf"\b(?i:it['’]s|it\s+is|(?:the\s+)?(?:whole\s+)?thing\s+is|this\s+is|that's)\s+"
        rf"(?P<is>(?i:called|named))\s+(?P<name>{NAME_SEQ})"
    ),
    lazy(
        rf"\b(?P<name>{NAME_SEQ})(?:\s+v?\d+(?:\.\d+)*)?\s*\((?i:our|my|the|a|an)\s+"
        rf"(?:[\w'’-]+\s+){{0,4}}?(?P<head>(?i:{WORK_NOUN}))\b"
    ),
    lazy(
        rf"\b(?P<name>{NAME_SEQ})\s+(?i:is|was)\s+(?i:our|my|a|an)\s+(?:[\w'’-]+\s+){{0,3}}?"
        rf"(?P<head>(?i:{WORK_NOUN}))\b"
    ),
    lazy(
        rf"\b(?i:codename|code\s+name|project\s+name|working\s+title)\s*[:=]\s*(?P<name>{NAME_SEQ})"
        rf"|\b(?i:internal|working|project|code|official)\s+(?i:name)\s+(?i:is)\s+(?P<quoted>{NAME_SEQ})"
    ),
    # "service is Cartwheel — our invoicing backend"
    lazy(
        rf"^(?i:the\s+|our\s+|my\s+)?(?:[\w-]+\s+)?(?P<head>(?i:{WORK_NOUN}))\s+(?i:is)\s+"
        rf"(?:(?i:called|named)\s+)?(?P<name>{NAME_SEQ})\s*(?:[—–,(-]|$)"
    ),
    # "a loyalty stamp card called Spoke Club": a named thing that is no person, pet or business
    lazy(
        rf"\b(?<!\bhave\s)(?<!\bgot\s)(?<!\bhad\s)(?<!\bfor\s)(?<!\bat\s)(?<!\bwith\s)(?<!\bin\s)"
        rf"(?i:a|an|our|my)\s+(?:[\w'’-]+\s+){{0,3}}?"
        rf"{_NOT_THING}[a-z][\w-]+,?\s+"
        rf"(?i:called|named)\s+(?:{_QUOTED}|(?P<name>{NAME_SEQ}))"
    ),
    # "I'm putting on The Tempest with my Year 12s"
    lazy(rf"\b(?i:putting\s+on|staging|directing|rehearsing|producing)\s+(?P<name>{NAME_SEQ})"),
    lazy(
        rf"\b(?i:internally|informally|officially)\s+(?i:called|named|known\s+as)\s+(?P<name>{NAME_SEQ})"
    ),
    lazy(rf"\b(?i:the|our|my)\s+(?P<name>{NAME_SEQ})\s+(?P<head>(?i:{WORK_NOUN}))\b"),
    lazy(
        r"\b(?i:i|we)\s+(?i:maintain|built|wrote|created|made|develop|run)\s+(?P<name>[\w-]+),"
        rf"\s+(?i:a|an|the|my|our)\s+(?:[\w'’-]+\s+){{0,4}}?(?P<head>(?i:{WORK_NOUN}))\b"
    ),
)
_ORG_NAMING = lazy(
    rf"\b(?i:a|an|the|our|my)\s+(?:[\w'’-]+\s+){{0,3}}?(?i:{ORG_NOUN}),?\s+(?:(?i:called|named)\s+)?"
    rf"(?P<name>{NAME_SEQ})"
)
# a product the user or their team uses, named at most three words after the verb ("I pay
# everything with the Revolut app", "we use a tracker called Plane"): a tool of theirs, a
# fact about them, not a piece of work of their own
_USED_BY_THEM = lazy(
    r"\b(?:i|we)(?:['’]m|['’]re|['’]ve|\s+am|\s+are|\s+have)?\s+(?:\w+\s+)?"
    r"(?:use[sd]?|using|pay|paying|paid|bank|banking|switched|switching|moved|tried|trying"
    r"|downloaded|installed|signed\s+up|track|tracking|keep|log|logging|book|booking)"
    r"(?:\s+[\w'’-]+){0,3}\s*$",
    re.IGNORECASE,
)
_IT_IS_NAME = lazy(rf"^(?i:it['’]s|it\s+is)\s+(?P<name>{NAME_SEQ})\b")
_ENDS_WITH_WORK = lazy(rf"\b(?P<head>(?i:{WORK_NOUN}))\W*(?:\S+\W*){{0,3}}$")


def namings(clause: str, previous: str) -> list[Naming]:
    """The projects a clause names, with the noun each is a name of."""
    orgs = {m.group("name") for m in _ORG_NAMING.finditer(clause)}
    found: dict[str, Naming] = {}
    for pattern in _NAMINGS:
        for match in pattern.finditer(clause):
            groups = match.groupdict()
            name = clean_name(groups.get("name") or groups.get("quoted") or "")
            if name and pattern is _NAMINGS[1]:
                name = re.sub(r"^The\s+", "", name)  # "The Falcon project": an article
            if not name or name in orgs or name in found:
                continue
            if _USED_BY_THEM.search(clause[: match.start()]):
                continue
            head = (groups.get("head") or "").lower()
            found[name] = Naming(name, head, bool(groups.get("is")))
    it_is = _IT_IS_NAME.match(clause)
    work = _ENDS_WITH_WORK.search(previous)
    if it_is and work and not found:
        name = clean_name(it_is.group("name"))
        if name:
            found[name] = Naming(name, work.group("head").lower(), False)
    return list(found.values())


def has_content(text: str, ignore: str) -> bool:
    """Whether a clause says more than a name: two content words besides `ignore`."""
    skip = {w.lower() for w in ignore.split()} | {"called", "named", "codename", "internally"}
    skip |= {"project", "project's", "working", "title", "call", "calling", "been", "i've", "we've"}
    return len([w for w in content_words(text) if w not in skip and w not in STOPWORDS]) >= 2


def project_heads(messages: list[list[str]]) -> dict[str, str]:
    """Every project the user's messages (as sentences) name -> the noun it names."""
    heads: dict[str, str] = {}
    for sentences in messages:
        previous = ""
        for sentence in sentences:
            for clause in split_clauses(sentence):
                for naming in namings(strip_fillers(clause), previous):
                    heads.setdefault(naming.name, naming.head)
                previous = clause
    return heads
