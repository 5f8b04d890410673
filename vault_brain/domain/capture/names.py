"""People named in a clause, for offline capture (projects are in capture/projects.py).

A person is captured where the user names them with a relation or a role ("my sister Ana",
"Ana, my manager", "Ana (my lead)", "Ana from QA", "my contact is a guy called Ana Lee",
"Prospero is played by Ana") or says something lasting about someone already introduced ("Ana
is allergic to nuts", "Ana trained in Vienna") or named with a lasting like ("Ana prefers
green tea").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from vault_brain.domain.capture.words import (
    DEPARTMENT,
    JOB,
    JOBS,
    KINSHIP,
    NAME_SEQ,
    NAME_WORD,
    NOT_NAMES,
    ORG_NOUN,
    PARTICLE,
    PERSON_NOUN,
    RELATION,
    SOCIAL,
    TITLE,
    WORK_NOUN,
    WORK_RELATIONS,
    alternation,
)
from vault_brain.domain.lazy_re import lazy
from vault_brain.domain.text import wordset

# Relations only a person has ("the student is X"; "the client is X" may be a company).
_INDIVIDUAL = alternation(
    (KINSHIP | SOCIAL | WORK_RELATIONS | JOBS)
    - wordset("client customer partner publisher sponsor investor owner agent contact landlord")
)
_POSS = rf"(?:\b(?i:my|our|his|her|their)|\b{NAME_WORD}['’]s)"
_OF = r"(?:\s+(?i:of|for)\s+(?:(?i:the)\s+)?[\w-]+)?"  # "head of department", "VP of eng"
_CO = r"(?:(?i:co)-?)?"  # "co-organiser", "cofounder"
_MODS = r"(?:[\w'’-]+\s+){0,3}?"
_PERSON_NAME = rf"{NAME_WORD}(?:\s+{NAME_WORD}){{0,2}}"
_CALLED = rf"(?:(?i:a|an|some)\s+(?i:{PERSON_NOUN})\s+(?i:called|named)\s+)"
_PLACE_OF = (
    rf"(?:(?i:{DEPARTMENT})|(?i:the\s+office|work|school|church|uni|university|college|the\s+gym"
    r"|next\s+door)\b)"
)
# "my wife's name is", "my wife's called", "my wife is called", "my wife called"
_NAMED = (
    r"(?:(?:['’]s)?\s+(?i:name)\s+(?i:is)|['’]s\s+(?i:called|named)"
    r"|\s+(?i:is|was)\s+(?i:called|named)|\s+(?i:called|named))"
)
_HAVE = (
    r"\b(?i:i\s+have|we\s+have|i've\s+got|we've\s+got|i\s+have\s+got)"
    r"\s+(?i:a|an|two|three|four|\d+)"
)
_NOT_AFTER_PLACE = r"(?<!\bto )(?<!\bfrom )(?<!\bin )(?<!\bat )(?<!→ )(?<!\bvia )"
_PERSON_PATTERNS = (
    # my sister Ana / Ana's girlfriend Bo / my wife's name is Ana / I have a son, Ana (a
    # place's whole name first: in "my manager at Tidewater Outfitters wants" nobody is named)
    lazy(
        rf"(?:(?:{_POSS}|{_HAVE})\s+{_MODS}{_CO}(?i:{RELATION})s?{_OF}(?:\s+(?i:there|here|(?:from|at|in)"
        rf"\s+(?:the\s+|my\s+)?(?!(?i:the|a|an)\b)(?>{NAME_SEQ}|[\w-]+)))?{_NAMED}?,?\s+|\b(?i:the)\s+{_MODS}(?i:{RELATION}){_OF},\s+"
        rf"|\b(?i:the)\s+{_MODS}(?i:{_INDIVIDUAL})\s+(?=(?i:is|was)\s))"
        rf"(?:(?i:is|was|'s|are)\s+)?\(?{_CALLED}?{TITLE}?(?P<name>{_PERSON_NAME})"
    ),
    # Ana, my manager / Ana (my flatmate) / Ana, a colleague
    lazy(
        rf"(?<![\w'’])(?P<name>{_PERSON_NAME})(?:,\s+(?i:my|our|his|her|their|the|a|an)\s+|\s*\("
        rf"(?:(?i:my|our|his|her|their|the|a|an)\s+)?){_MODS}(?i:{RELATION})\b"
    ),
    # Ana's our drummer / Ana is my coach / Ana at Acme is our adviser
    lazy(
        rf"(?<![\w'’])(?P<name>{_PERSON_NAME})(?:\s+(?i:at|from)\s+{NAME_SEQ})?(?:['’]s|\s+is|\s+was)\s+"
        rf"(?i:my|our|his|her|the|a|an)\s+{_MODS}(?i:{RELATION})\b"
    ),
    # the granddaughter who set this up is Ana
    lazy(
        rf"\b(?i:the)\s+{_MODS}(?i:{RELATION})\s+(?i:who|that)\b[^,.;]*?\s(?i:is|'s)\s+{TITLE}?"
        rf"(?P<name>{_PERSON_NAME})"
    ),
    # a friend of mine, Ana / a colleague called Ana / I report to Ana / married to Ana
    lazy(
        rf"\b(?i:a|an)\s+{_MODS}(?i:{RELATION})\s+(?:(?i:of\s+(?:mine|ours)),?|(?i:called|named))"
        rf"\s+{TITLE}?(?P<name>{_PERSON_NAME})"
        rf"|\b(?i:married|engaged)\s+(?i:to)\s+{TITLE}?(?P<name3>{_PERSON_NAME})"
        rf"|\b(?i:i|we)\s+(?i:report|reports)\s+(?i:to|into)\s+{TITLE}?(?P<name2>{_PERSON_NAME})"
    ),
    # Ana, she's the Android lead
    lazy(
        rf"(?<![\w'’])(?P<name>{_PERSON_NAME}),\s+(?i:he|she|they)(?:['’]s|\s+is|\s+are|['’]re)\s+"
        rf"(?i:my|our|the|a|an)\s+{_MODS}(?i:{RELATION})\b"
    ),
    # Ana from QA / Ana on my team / Ana in payroll / Ana from Acme
    lazy(
        rf"{_NOT_AFTER_PLACE}(?<![\w'’])(?P<name>{NAME_WORD}(?:\s+{NAME_WORD})?)\s+"
        rf"(?:(?i:from|on|in)\s+(?:(?i:my|our|the)\s+)?{_PLACE_OF}"
        rf"|(?i:from)\s+(?P<team>[A-Z]{{2,}}\b|{NAME_WORD}))"
    ),
    # we have a greyhound called Ana
    lazy(
        rf"\b(?i:have|had|got|adopted|rescued)\s+(?i:a|an)\s+(?:[\w'’-]+\s+){{0,3}}?"
        rf"(?!(?i:{WORK_NOUN}|{ORG_NOUN})\b)[a-z][\w-]+,?\s+(?i:called|named)\s+(?P<name>{_PERSON_NAME})"
    ),
    # Ana's notes (she's our co-author) / a co-maintainer (Ana, she owns the API)
    lazy(
        rf"(?<![\w'’])(?P<name>{_PERSON_NAME})(?:['’]s)?(?:\s+[\w-]+){{0,4}}\s*\((?i:he|she|they)"
        rf"(?:['’]s|\s+is|\s+are|['’]re)\s+(?i:my|our|the|a|an)\s+{_MODS}{_CO}(?i:{RELATION})\b"
        rf"|\b{_CO}(?i:{RELATION})s?\s*\((?P<name2>{_PERSON_NAME})\s*[,)]"
        # Prospero is played by Ana
        rf"|\b{NAME_SEQ}\s+(?i:is|was|will\s+be)\s+(?i:played|sung|voiced|portrayed|danced)\s+(?i:by)\s+"
        rf"(?P<name3>{_PERSON_NAME})"
    ),
    # Mrs Ana next door
    lazy(
        rf"(?<![\w'’])(?P<name>{_PERSON_NAME})\s+(?i:next\s+door|upstairs|downstairs"
        r"|across\s+the\s+(?:road|street|hall))\b"
    ),
    # Ana is a nurse / Ana is vegan / Ana has a nut allergy (at the start of a clause)
    lazy(
        rf"^{TITLE}?(?P<name>{_PERSON_NAME})(?:(?:['’]s|\s+is|\s+was)\s+(?:(?i:a|an)\s+{_MODS}"
        rf"(?i:{JOB})\b|(?i:vegan|vegetarian|pescatarian|allergic|lactose|coeliac|celiac|diabetic"
        rf"|gluten|obsessed\s+with))|\s+(?i:has|have)\s+(?:(?i:a|an)\s+)?(?:\w+\s+){{0,2}}"
        rf"(?i:allergy|intolerance)|\s+(?i:doesn't\s+eat|does\s+not\s+eat|can't\s+eat|hates"
        rf"|loves|adores|prefers|likes|enjoys|dislikes|can't\s+stand|works\s+(?:at|for|as)|lives\s+in"
        rf"|gets\s+(?:carsick|seasick|migraines"
        rf"|motion\s+sick)))"
    ),
)
_RELATION_PATTERNS = (
    0,
    1,
    2,
    3,
    4,
    5,
    7,
    8,
    9,
)  # the patterns above that give a relation, not a team
# Something lasting said of a person: a role, a diet, an allergy, a like, work, study.
ATTRIBUTE = (
    r"(?:['’]s|\s+is|\s+was)?\s+(?i:\d+\b|obsessed\s+with|into|allergic|vegetarian|vegan|coeliac"
    r"|celiac|lactose|an?\s|my\s|our\s|the\s|at\s+(?:university|uni|school|college)|studying"
    r"|retired|(?:has|have)\s+(?:an?\s+)?(?:\w+\s+){0,2}(?:allergy|intolerance|diabetes|asthma)"
    r"|(?:doesn't|does\s+not|can't|cannot|won't|never)\s+eat|loves|likes|hates|prefers|adores"
    r"|dislikes|can't\s+stand|works\s+(?:at|for|as|in|on)|lives\s+in|studies|plays|drums"
    r"|gets\s+(?:carsick|seasick|migraines|motion\s+sick)|is\s+\d+|turn(?:s|ed)\s+\d+"
    r"|sings|teaches|eats|runs|owns|leads|handles|manages|trained|studied|grew\s+up|speciali[sz]es"
    r"|speaks|comes\s+from|is\s+from|was\s+born|volunteers|coaches|writes|drives|knows|cycles|swims"
    r"|works|lives)"
)
_PRONOUN_ATTRIBUTE = lazy(
    rf"^(?i:he|she|they){ATTRIBUTE}"
    # "I'm not veggie btw, he is": what the user is not, the person just named is
    r"|^(?i:i'?m|i\s+am)\s+(?i:not)\s+[\w\s'-]{2,30}?,?\s+(?i:but\s+)?(?i:he|she|they)\s+(?i:is|are)\W*$"
)
_BOUNDARY = lazy(r",\s+(?:and\s+|but\s+)?|\s+and\s+|\s+but\s+")


@dataclass(frozen=True)
class Mention:
    name: str  # as it would title a note: titles and possessives removed
    start: int
    end: int
    relation: str = ""  # the relation or role the clause gives, lower case ("sister")


_RELATION_WORD = lazy(rf"\b(?i:{RELATION})\b")


def _relation(match: re.Match[str], name: str) -> str:
    """The relation word a person pattern matched beside the name ("sister"), if any."""
    words = _RELATION_WORD.findall(match.group().replace(name, " "))
    return words[-1].lower() if words else ""


def related(clause: str, relations: dict[str, str]) -> str | None:
    """The person "my sister" stands for, once the user has named their sister."""
    match = re.match(rf"(?i:my|our)\s+{_MODS}(?P<rel>(?i:{RELATION}))(?:['’]s)?\b", clause)
    return relations.get(match.group("rel").lower()) if match else None


def said_of_related(clause: str, relations: dict[str, str]) -> str | None:
    """The known person a clause says something lasting about by relation alone ("my
    sister is a vet", "my boss hates meetings")."""
    name = related(clause, relations)
    if name is None:
        return None
    said = re.match(rf"(?i:my|our)\s+{_MODS}(?i:{RELATION}){ATTRIBUTE}", clause)
    return name if said else None


def _name_of(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return groups.get("name") or groups.get("name2") or groups.get("name3") or ""


_AND_NAME = lazy(rf"\s*(?:\(\d+\))?(?:\s+and\s+|\s*&\s*|,\s+)(?P<name>{_PERSON_NAME})")


def _also_named(clause: str, match: re.Match[str]) -> list[str]:
    """ "my kids Tom and Lily": the names after the first that share its relation."""
    out: list[str] = []
    end = match.end()
    before = clause[match.start() : match.start("name")].split()
    last = before[-1].strip(",(").lower() if before else ""
    plural = last.endswith("s") and not last.endswith("ss")
    while (more := _AND_NAME.match(clause, end)) is not None:
        if "," in more.group().split(more.group("name"))[0] and not plural:
            break
        name = clean_name(more.group("name"))
        if not name:
            break
        out.append(name)
        end = more.end()
    return out


# The user introducing themself: the name after it is not someone else's.
_SELF = lazy(
    r"\b(?:i'?m|i’m|i am|my name is|my name's|name's|call me|this is)\s+"
    r"(?:(?:mr|mrs|ms|miss|mx|dr|prof|professor|sir|dame)\.?\s+)?$",
    re.IGNORECASE,
)


def _plausible(match: re.Match[str], clause: str) -> bool:
    """Not the user's own name ("I'm Ana, a nurse"), not a name running on from a
    capitalised word before it ("Moulins Bernard from"), and a team that is not a calendar
    word ("from March")."""
    team = match.groupdict().get("team")
    if team and team in NOT_NAMES:
        return False
    if _SELF.search(clause[: match.start()]):
        return False
    before = clause[: match.start()].split()
    return not (before and re.fullmatch(NAME_WORD, before[-1]) and before[-1] not in NOT_NAMES)


def clean_name(raw: str) -> str | None:
    """A person's or project's name as a note title, or None if it is not a name."""
    name = re.sub(rf"^{TITLE}", "", raw.strip())
    name = re.sub(r"['’]s$", "", name).strip(" ,.")
    words = name.split()
    while words and (words[-1] in NOT_NAMES or re.fullmatch(PARTICLE, words[-1])):
        words.pop()
    first = 1 if len(words) > 1 and words[0] == "The" else 0  # "The Lantern Keeper"
    if not words[first:] or words[first] in NOT_NAMES:
        return None
    return " ".join(words)


_HIS_NAME = lazy(
    rf"^(?i:his|her|their)\s+(?:(?i:full|real)\s+)?(?i:name)(?:['’]s|\s+(?i:is))\s+{TITLE}?"
    rf"(?P<name>{_PERSON_NAME})"
)
_MY_RELATION = lazy(rf"\b(?i:my|our)\s+{_MODS}(?P<rel>(?i:{RELATION}))\b")


def named_by_pronoun(clause: str, previous: str) -> Mention | None:
    """ "...for my dad? His name's Haruto": the person the clause before gave by relation."""
    match = _HIS_NAME.match(clause)
    name = clean_name(match.group("name")) if match else None
    if match is None or name is None:
        return None
    relations = [m.group("rel").lower() for m in _MY_RELATION.finditer(previous)]
    return Mention(name, match.start(), match.end(), relations[-1] if relations else "")


def people(clause: str, known: list[str], projects: list[str], previous: str = "") -> list[Mention]:
    """The people a clause names with a relation or role, or says something lasting about
    (when already known), in order."""
    found: dict[str, Mention] = {}
    pronoun = named_by_pronoun(clause, previous)
    if pronoun is not None and pronoun.name not in projects:
        found[pronoun.name] = pronoun
    for pattern in _PERSON_PATTERNS:
        for match in pattern.finditer(clause):
            name = clean_name(_name_of(match))
            if not _plausible(match, clause):
                continue
            if name and name not in projects and name not in found:
                found[name] = Mention(name, match.start(), match.end(), _relation(match, name))
            if pattern is _PERSON_PATTERNS[0]:
                for other in _also_named(clause, match):
                    if other not in projects and other not in found:
                        found[other] = Mention(other, match.start(), match.end())
    for mention in group_members(clause):
        if mention.name not in projects and mention.name not in found:
            found[mention.name] = mention
    for name in known:
        said = re.match(
            rf"(?:{_POSS}\s+{_MODS}(?i:{RELATION})\s+)?{re.escape(name)}{ATTRIBUTE}", clause
        )
        if said and name not in found:
            found[name] = Mention(name, 0, said.end())
    return sorted(found.values(), key=lambda m: m.start)


def segments(clause: str, mentions: list[Mention]) -> list[str]:
    """The part of the clause about each mention: cut at the comma or "and" before the next
    person's mention, so "my husband A eats fish, and my friend B is vegan" gives two."""
    if not mentions:
        return []
    starts = [0]
    for before, mention in pairwise(mentions):
        cuts = [m for m in _BOUNDARY.finditer(clause, before.end, mention.start)]
        starts.append(cuts[-1].end() if cuts else starts[-1])
    ends = [*starts[1:], len(clause)]
    out = []
    for start, end in zip(starts, ends, strict=True):
        piece = clause[start:end].strip(" ,;")
        out.append(piece if start < end and piece else clause)
    return out


_OPINION = lazy(
    r"\s+(?:(?i:always|really|still|honestly)\s+)?(?i:says|said|swears|swore|thinks|thought|reckons"
    r"|believes|claims|insists|feels|argues|keeps\s+saying)\b(?!\s+(?:hello|hi|sorry|thanks)\b)"
)


def without_opinion(text: str, name: str) -> str:
    """A person's segment without what they say or think ("my neighbour Ana swears it's why
    he's healthy" -> "my neighbour Ana"): their opinion is not a fact about them."""
    at = text.find(name)
    match = _OPINION.search(text, at + len(name)) if at >= 0 else None
    if match is None or match.start() != at + len(name):
        return text
    return text[: match.start()]


# What happened to someone once: "has been limping", "is off sick", "sent me a file".
_ONE_OFF_STATE = lazy(
    r"^(?:\s*\([^)]*\))?,?\s+(?:(?i:just|recently|suddenly|finally)\s+)?(?:(?i:has\s+been|have\s+been)"
    r"\s+(?i:[a-z]+ing|sick|ill|unwell|poorly|off|away|injured|hurt|lost|missing|grumpy|upset)\b"
    r"|(?i:is|was)\s+(?:(?i:a\s+bit|really|so|very|quite)\s+)?(?i:sick|ill|unwell|poorly|off\s+sick"
    r"|injured|hurt|lost|missing|grumpy|upset|limping|teething|poorly)\b"
    r"|(?i:sent|asked|told|gave|emailed|messaged|texted|called|rang|showed|forwarded|pinged)\s+(?i:me|us)\b)"
)


def passing_state(text: str, name: str) -> bool:
    """A person's segment that only says what happened to them once ("my dog Rex has been
    limping", "my colleague Bo sent me a config"): no lasting fact about them."""
    at = text.find(name)
    return at >= 0 and bool(_ONE_OFF_STATE.match(text[at + len(name) :]))


def with_relation(mention: Mention, text: str) -> str:
    """ "His name's Haruto, ..." -> "My dad: His name's Haruto, ...", when the relation was
    given in the clause before."""
    if mention.relation and not re.search(rf"\b{re.escape(mention.relation)}\b", text, re.I):
        return f"My {mention.relation}: {text}"
    return text


def continues_person(clause: str) -> bool:
    """ "She's a physio": a clause whose subject is the person just named, saying something
    lasting about them."""
    return bool(_PRONOUN_ATTRIBUTE.match(clause))


_GROUP = lazy(
    r"\b(?i:my|our|the|his|her|their)\s+(?:[\w'’-]+\s+)?(?i:kids|children|sons|daughters|boys"
    r"|girls|twins|grandkids|grandchildren|parents|siblings|brothers|sisters|cousins|friends"
    r"|flatmates|roommates|housemates|colleagues|teammates)\b"
    r"|\b(?i:mum|mom|mother|dad|father|parent)\s+(?i:of|to)\s+(?:[\w-]+\s+)?(?i:twins|triplets|kids"
    r"|children|boys|girls|sons|daughters)\b"
)
_NAME_LIST = lazy(
    rf"(?P<a>{NAME_WORD})(?:,\s+(?P<b>{NAME_WORD}))?,?\s+(?:and|&)\s+(?P<c>{NAME_WORD})"
)


def group_members(clause: str) -> list[Mention]:
    """ "The kids are 6 and 9, Mia and Jonah": the names listed in a clause about a group the
    user names by relation."""
    group = _GROUP.search(clause)
    if not group:
        return []
    out: list[Mention] = []
    for match in _NAME_LIST.finditer(clause, group.end()):
        for raw in match.group("a", "b", "c"):
            name = clean_name(raw) if raw else None
            if name:
                out.append(Mention(name, group.start(), len(clause)))
    return out


def states_relation(text: str, name: str) -> bool:
    """Whether the text gives the person's relation or role ("my sister Ana", "Ana, our
    lead"): the part of a person fact a later relation supersedes."""
    for index in _RELATION_PATTERNS:
        for match in _PERSON_PATTERNS[index].finditer(text):
            if clean_name(_name_of(match)) == name:
                return True
    return False


_RELATION_LEAD = lazy(
    rf"^(?:(?:my|our|his|her|their)\s+(?:[\w-]+\s+){{0,3}}?(?i:{RELATION}),?\s+)?", re.I
)
_PRONOUN = lazy(r"^(?:he|she|his|her)(?:'s|’s|\s)", re.IGNORECASE)


def leading_person(core: str, here: list[str], before: list[str]) -> str | None:
    """The person a clause starts with (`here`: named in this message, `before`: earlier): by
    name (after "my sister"), or "he", "she", "his" or "her" standing for the last named."""
    lead = _RELATION_LEAD.match(core)
    rest = core[lead.end() if lead else 0 :]
    for name in [*here, *before]:
        if rest.startswith(name.split()[0]):
            return name
    named = here or before
    if _PRONOUN.match(core) and named:
        return named[-1]
    if len(set(here)) == 1 and re.match(r"(?:the|their)\b", core, re.IGNORECASE):
        return here[0]  # "My sister Ana is getting married. The wedding is in May."
    return None
