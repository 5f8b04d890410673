"""Which slot (subject attribute) a statement fills, so a later statement filling the same
slot supersedes it: where someone lives, where they work, which tool of a kind they use,
what they drink, when a meeting is (pure).

A slot is `attribute[:qualifier]`: "identity:location", "identity:employer",
"tool:editor", "habit:drink:morning", "meeting:standup:time". The subject is the note the
statement lives in (or the subject of the capture), so it is not part of the key. One
table of attributes, each a few verb patterns (the states "I live in X" and the changes
"moved to X", "left X for Y", "switched to X") around a value, and, where the verbs alone
are too loose ("use", "switched to"), a lexicon that says which kind of thing the value is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vault_brain.domain.capture.words import CALENDAR_WORD
from vault_brain.domain.lazy_re import lazy

# Kinds of things, for attributes whose verbs say little ("I use X", "switched to X").
LEXICON: dict[str, tuple[str, ...]] = {
    "editor": (
        "vim", "neovim", "nvim", "emacs", "vs code", "vscode", "visual studio code", "helix",
        "sublime text", "sublime", "atom", "nano", "zed", "intellij", "pycharm", "webstorm",
        "cursor", "notepad++", "kate", "textmate", "bbedit", "spacemacs", "doom emacs",
        "rider", "clion", "goland", "rubymine", "android studio", "xcode", "eclipse",
        "netbeans", "kakoune", "lapce", "fleet", "windsurf", "vscodium",
    ),
    "browser": ("firefox", "chrome", "chromium", "safari", "brave", "vivaldi", "opera"),
    "shell": ("bash", "zsh", "fish", "nushell", "powershell"),
    "terminal": ("iterm", "iterm2", "alacritty", "kitty", "wezterm", "ghostty", "warp"),
    "notes app": ("obsidian", "notion", "evernote", "logseq", "bear", "onenote", "joplin"),
    "writing app": (
        "scrivener", "ulysses", "ia writer", "google docs", "microsoft word", "ms word",
        "libreoffice writer", "final draft", "vellum", "novelcrafter", "plottr", "dabble",
        "typora", "overleaf",
    ),
    "breakfast": (
        "porridge", "oatmeal", "overnight oats", "oats", "granola", "muesli", "cereal",
        "avocado toast", "scrambled eggs", "yoghurt", "yogurt", "bagels", "pancakes",
    ),
    "drink": (
        "green tea", "black tea", "herbal tea", "tea", "coffee", "espresso", "flat white",
        "latte", "cappuccino", "americano", "matcha", "chai", "yerba mate", "mate",
        "hot chocolate", "cocoa", "orange juice", "juice", "kombucha", "smoothie",
        "warm water", "water", "decaf", "rooibos", "cortado", "macchiato", "mocha",
        "earl grey", "oolong", "sencha", "genmaicha", "kefir", "protein shake", "lemon water",
        "sparkling water", "hot water", "barley tea", "cold brew", "iced coffee",
        "filter coffee", "black coffee", "oat latte", "energy drink", "milk", "wine",
        "red wine", "white wine", "beer", "chamomile", "peppermint tea", "mint tea", "cola",
        "hot milk",
    ),
}  # fmt: skip
_TOOL_KINDS = ("editor", "browser", "shell", "terminal", "notes app", "writing app")
_MEETINGS = (
    r"stand-?ups?|daily scrum|scrum|retros?|retrospectives?|syncs?|one-on-ones?|1:1s?"
    r"|1-on-1s?|one-to-ones?|1-to-1s?|sprint planning|planning|sprint reviews?|demos?"
    r"|all-hands|check-ins?"
    r"|team meetings?|staff meetings?|meetings?|team calls?|calls?|catch-?ups?|check-?ins?"
    r"|(?:design |code |weekly |monthly )?reviews?|huddles?|town ?halls?|office hours"
)
_TIME = (
    r"(?:\d{1,2}(?:[:.]\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)?(?![\w:/-])|noon|midday|midnight"
    r"|half past \w+|quarter (?:past|to) \w+|half (?:one|two|three|four|five|six|seven|eight"
    r"|nine|ten|eleven|twelve))"
)
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b"
# when a meeting is: its time (on a day or not), or else its day
_WHEN = rf"(?:(?:{_DAY}\s+at\s+)?(?P<value>{_TIME})|(?P<day>{_DAY}))"
# a time that says it is one without a preposition ("standup is now half nine", "10:30")
_CLOCK = (
    r"(?:\d{1,2}[:.]\d{2}\s*(?:a\.?m\.?|p\.?m\.?)?|\d{1,2}\s*(?:a\.?m\.?|p\.?m\.?)"
    r"|noon|midday|half past \w+|quarter (?:past|to) \w+|half (?:one|two|three|four|five|six"
    r"|seven|eight|nine|ten|eleven|twelve))(?![\w:/-])"
)
_DAYPART = lazy(r"\b(morning|evening|night|afternoon|breakfast|lunch|dinner|bedtime)s?\b", re.I)
_PLACE = r"(?-i:[A-Z][\w'’-]+(?:[ -](?:de |da |do |del |am |upon |on |-)?(?-i:[A-Z])[\w'’-]+)*)"
_ORG = r"(?-i:[A-Z0-9][\w&'’.-]*(?:\s+(?-i:[A-Z0-9&])[\w&'’.-]*)*)"
_ADV = (
    r"(?:(?:just|recently|finally|now|also|still|actually|since|last \w+|eventually"
    r"|currently)\s+)*"
)
_HAVE = r"(?:(?:have|'ve|had|'d)\s+)?"
# "I", "we've just", "I have now", "we packed up and"
_WE = rf"(?:i|we)(?:\s+|(?=')){_HAVE}{_ADV}{_HAVE}(?:(?:[\w']+\s+){{1,3}}?and\s+)?"

_BE = r"(?:i'?m|i am|we'?re|we are)"
_AT_ORG = rf"(?:the\s+)?(?P<value>{_ORG})"  # "at the Guardian" -> Guardian
# "I moved (from X) to Y", "we relocated to Y", "moved out to Y", "made the move to Y": the
# one residence pattern a job can also fill ("moved to Deliveroo, same kind of data role")
_MOVED_TO = (
    rf"\b(?:{_WE}|^{_ADV})(?:moved|relocated|moving|relocating|made the move|made the jump)"
    rf"(?:\s+[a-z]+)?(?:\s+from\s+{_PLACE})?\s+(?:to|into)\s+(?P<value>{_PLACE})"
)
_RESIDENCE = (
    # "I live in X", "we've been living in X", "I'm based in X", "living in X now"
    rf"\b(?:{_WE}(?:live|lived|been living|am living|'m living|are living|reside|resided)"
    rf"|{_BE}\s+{_ADV}(?:based|living|settled|residing|renting|staying)"
    rf"|^{_ADV}(?:living|based))"
    rf"\s+(?:in|near|outside|out of)\s+(?P<value>{_PLACE})",
    _MOVED_TO,
    # "home is now X", "my flat is in X", "our new house is just outside X", "home these
    # days is X"
    rf"\b(?:(?:my|our)\s+(?:new\s+)?(?:home|flat|house|apartment|place)|home)"
    rf"(?:\s+(?:these days|now|nowadays))?\s+is\s+{_ADV}"
    rf"(?:(?:in|near|outside|just outside)\s+)?(?P<value>{_PLACE})",
    # "we bought a place in X", "I rent a flat in X"
    rf"\b{_WE}(?:bought|rent|rented|renting|found|got|own)\s+(?:a|an|our|my)\s+"
    rf"(?:[\w-]+\s+){{0,2}}?(?:home|flat|house|apartment|place|condo)\s+in\s+(?P<value>{_PLACE})",
    # "now I'm in X", "we're now in X", "we are in X now": where the speaker is now
    rf"\bnow,?\s+{_BE}\s+in\s+(?P<value>{_PLACE})",
    rf"\b{_BE}\s+now\s+in\s+(?P<value>{_PLACE})",
    rf"\b{_BE}\s+in\s+(?P<value>{_PLACE})\s+now\b",
    # "I call X home", "I'm X-based"
    rf"\b{_WE}call\s+(?P<value>{_PLACE})\s+home\b",
    rf"\b{_BE}\s+{_ADV}(?P<value>{_PLACE})-based\b",
)
_WORKS = (
    r"(?:work|worked|working|been working|freelance|freelancing|consult|consulting|contract"
    r"|contracting|teach|teaching|taught|lecture|lecturing)"
)
_EMPLOYER = (
    rf"\b(?:{_WE}|(?:i'?m|i am)\s+{_ADV}|^{_ADV}){_WORKS}(?:\s+\w+ly)?(?:\s+[a-z]+){{0,2}}?"
    rf"(?:\s+as\s+an?\s+[\w -]+?)?\s+(?:at|for)\s+{_AT_ORG}",
    rf"\b(?:{_WE}|^{_ADV})(?:left|quit)\s+{_ORG}\s+(?:to\s+join|for)"
    rf"\s+{_AT_ORG}",
    rf"\b(?:{_WE}|^{_ADV})(?:joined|started(?:\s+a\s+new\s+job)?\s+at"
    rf"|got\s+a\s+job\s+at|took\s+a\s+job\s+at|moved\s+jobs\s+to|switched\s+jobs\s+to"
    rf"|accepted\s+an?\s+(?:job\s+)?offer\s+from)"
    rf"\s+{_AT_ORG}",
    rf"\b(?:i'?m|i am)\s+(?:now\s+)?employed\s+(?:by|at)\s+{_AT_ORG}",
    # a clause about a job naming where: "I switched jobs, I'm now at X", "new gig at X"
    rf"\b(?:jobs?|role|position|post|hired|employer|gig|offer)\b.*?\b(?:at|by|with)\s+{_AT_ORG}",
    # "I'm at Fabrikam as of this week", "I'm with Stripe since May"
    rf"\b(?:i'?m|i am)\s+{_ADV}(?:at|with)\s+{_AT_ORG}(?=\s+(?:as of|since|starting)\b)",
    # "I'm joining X", "I'll be starting at X", "I've been at X for two years"
    rf"\b(?:(?:i'?m|i am|i'll be|i will be)\s+{_ADV}(?:joining|starting\s+at)"
    rf"|{_WE}been\s+(?:at|with)(?=\s+{_ORG}\s+(?:for|since)\b))\s+{_AT_ORG}",
    # "I'm a data analyst at Shopify", "I'm on the platform team at X", "an engineer over at X"
    rf"\b(?:i'?m|i am)\s+{_ADV}(?:an?|the|on the|on an?)\s+(?:[\w-]+\s+){{1,4}}?"
    rf"(?:over\s+)?(?:at|for|with)\s+{_AT_ORG}",
    rf"\bmy\s+(?:new\s+)?(?:employer|company)\s+is\s+(?:now\s+)?{_AT_ORG}",
)
# a verb that takes a tool or a drink: the lexicon says which
_TAKES = (
    rf"\b(?:{_WE}(?:(?:\w+ly|always|often|mostly|still|now)\s+)?|(?:i'?m|i am)\s+{_ADV}"
    rf"|^{_ADV})"
    r"(?:on|use|used|using|switched|switching|moved|moving|went|gone|changed|migrated|'ve|"
    r"drink|drank|drinking|eat|ate|eating|have|having|start the day with|started drinking|"
    r"grab|grabbing|order|sip|"
    r"(?:am|'m)\s+on|code in|write in|edit in|prefer|moved on to|browse with|start with"
    r"|kick off with|begin with)\b"
)
# what a clause leaves ("from vim", "instead of tea", "gave up espresso", "no more coffee")
_LEAVING = lazy(
    r"\b(?:from|instead of|rather than|over(?!\s+to\b)|in place of|gave up|given up|give up"
    r"|giving up|quit|quitting|dropped|ditched|stopped(?: \w+ing)?|no more|no longer(?: \w+)?"
    r"|cut out|cut down on|swapped|replaced"
    r"|not|don't|do not|hate|dislike|can't stand|tried|trying|try|off)\s+"
    r"(?:(?:the|a|an|my|using|drinking)\s+)?(?:\w+\s+)?$",
    re.I,
)
# what is said just before a thing a first-person clause takes ("coding in Zed", "start
# with an espresso", "it's herbal tea now")
_TAKING = lazy(
    r"\b(?:in|with|on|to|for|it's|it is|its|now|mostly|only)\s+(?:(?:a|an|the|my|cup of|mug of"
    r"|glass of|[\w-]+)\s+){0,2}$",
    re.I,
)
_ROUTINE = lazy(
    r"\b(?:(?:every|each)\s+(?:morning|evening|night|afternoon|day)|these days|nowadays"
    r"|before bed|at bedtime)\b",
    re.I,
)
_FIRST_PERSON = lazy(r"\b(?:i|we|my|our|me|us|i'm|i've|we're|we've)\b", re.I)
# "Neovim is what I use", "Helix is my daily driver", "tea's what I have"
_IS_MINE = lazy(
    r"^(?:e?s)?\s*(?:is|'s|has been|remains)\s+(?:now\s+|still\s+)?(?:my|what (?:i|we)"
    r"|the (?:one|thing) (?:i|we)|our)\b",
    re.I,
)
# "a big coffee drinker", "a tea person": the thing is the user's habit
_TAKER = lazy(r"^(?:e?s)?\s+(?:drinker|person|addict|lover|user|fan)\b", re.I)
_MY_THING = lazy(r"\bmy\s+(?:go-to\s+|main\s+|daily\s+|usual\s+|morning\s+)?(\w+(?: \w+)?)"
                 r"\s+(?:is|these days is|now is|is now)\s+(.+)$", re.I)  # fmt: skip
_MEETING_TIME = (
    rf"\b(?P<subject>{_MEETINGS})\b(?:\s+\w+){{0,3}}?\s+(?:is|'s|are|starts|begins|happens|runs"
    r"|takes place|was moved|got moved|has moved|have moved|moved|is moving|is being moved"
    r"|was pushed|got pushed|pushed|was shifted|shifted|changed|kicks off|kick off|got bumped"
    r"|was bumped|bumped|got rescheduled|was rescheduled|got moved up|moved up)\s+(?:\w+\s+){0,3}?"
    rf"(?:(?:to|at|for|on|back to|up to)\s+{_WHEN}|(?P<clock>{_CLOCK}))",
    rf"\b(?:moved|pushed|shifted|rescheduled|changed|bumped)\s+(?:the\s+|our\s+|my\s+)?"
    rf"(?:\w+\s+)?(?P<subject>{_MEETINGS})\s+(?:\w+\s+){{0,2}}?to\s+(?:[\w-]+\s+){{0,2}}?"
    rf"(?:at\s+|on\s+)?{_WHEN}",
)


@dataclass(frozen=True)
class Filled:
    """A statement's slot and the value it gives it."""

    slot: str
    value: str


def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


_ATTRIBUTES: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...] = (
    ("identity:location", _compiled(_RESIDENCE)),
    ("identity:employer", _compiled(_EMPLOYER)),
)
_TAKES_RE = re.compile(_TAKES, re.IGNORECASE)
_MEETING_RE = _compiled(_MEETING_TIME)
_KIND_OF: dict[str, str] = {word: kind for kind, words in LEXICON.items() for word in words}
_LEXICON_RE = re.compile(
    r"(?<![\w-])("
    + "|".join(re.escape(w) for w in sorted(_KIND_OF, key=len, reverse=True))
    + r")(?:e?s)?(?![\w-])",  # (a plural too: "lattes")
    re.IGNORECASE,
)


def _lexical(text: str) -> tuple[str, str] | None:
    """The first thing of a known kind in `text`: (kind, word)."""
    match = _LEXICON_RE.search(text)
    if match is None:
        return None
    word = match.group(1).lower()
    return _KIND_OF[word], word


def lexicon_words(text: str) -> list[str]:
    """The things of a known kind `text` names ("iced coffee", "Evernote")."""
    return [m.group(1) for m in _LEXICON_RE.finditer(text)]


def _taken(core: str) -> Filled | None:
    """A tool or a drink the user uses, drinks or switched to ("switched from vim to
    Helix", "I drink tea every morning", "I do my coding in Zed", "I gave up espresso, it's
    herbal tea now"): the first thing of a known kind the clause does not leave."""
    verb = _TAKES_RE.search(core)
    mine = _MY_THING.search(core)  # "my editor is Helix", "my morning drink is coffee"
    # a routine is the speaker's own ("every morning it's porridge now")
    first_person = any(p.search(core) for p in (_FIRST_PERSON, _ROUTINE)) or verb is not None
    left: str | None = None  # the kind of what the clause leaves: the slot it changes
    for match in _LEXICON_RE.finditer(core):
        before = core[: match.start()]
        if _LEAVING.search(before[-40:]):
            left = left or _KIND_OF[match.group(1).lower()]
            continue  # "from vim", "instead of vim", "gave up espresso"
        if not (
            (verb is not None and verb.end() <= match.start())
            or (mine is not None and mine.start(2) <= match.start())
            or (first_person and _TAKING.search(before[-30:]))
            or (first_person and _TAKER.search(core[match.end() :]))
            or _IS_MINE.match(core[match.end() :])
        ):
            continue
        word = match.group(1).lower()
        return _slot_for(core, _KIND_OF[word], word, left)
    replacement = _REPLACEMENT.search(core) if left and first_person else None
    if left and replacement and replacement.group("value").split()[0].lower() not in _NOT_VALUES:
        # "I've stopped the smoothies; it's porridge now": what replaces a known thing
        return _slot_for(core, left, replacement.group("value").lower(), None)
    return None


# what replaces the thing a clause leaves, named or not in the lexicon ("it's porridge now")
_REPLACEMENT = lazy(
    r"\b(?:it'?s|it is|i'?m on|i have|i eat|i drink)\s+(?:(?:a|an|some)\s+)?"
    r"(?P<value>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+(?:now|instead|these days|nowadays)\b",
    re.I,
)
# words that open no replacement ("it's too late now", "it's fine now")
_NOT_VALUES = {
    "the", "that", "this", "it", "over", "done", "fine", "better", "worse", "time", "all",
    "too", "so", "very", "really", "much", "late", "early", "ok", "okay", "gone", "not",
}  # fmt: skip


def _slot_for(core: str, kind: str, word: str, left: str | None) -> Filled:
    """The slot of taking `word` (of `kind`): a tool's kind, or a habit's kind and time of
    day. A clause that leaves one thing for another changes the slot of what it leaves
    ("ditched Scrivener for Obsidian" is about the writing app, whatever else Obsidian is)."""
    if left and (left in _TOOL_KINDS) == (kind in _TOOL_KINDS):
        kind = left
    if kind in _TOOL_KINDS:
        return Filled(f"tool:{kind}", word)
    part = _DAYPART.search(core)
    when = f":{part.group(1).lower()}" if part else ""
    return Filled(f"habit:{kind}{when}", word)


def _meeting(core: str) -> Filled | None:
    for pattern in _MEETING_RE:
        match = pattern.search(core)
        if match is not None:
            name = re.sub(r"[^a-z0-9:]+", "", match.group("subject").lower()).rstrip("s")
            name = {
                "retrospective": "retro",
                "1on1": "1:1",
                "oneonone": "1:1",
                "onetoone": "1:1",
                "1to1": "1:1",
            }.get(name, name)
            groups = match.groupdict()
            value = groups["value"] or groups.get("day") or groups.get("clock") or ""
            return Filled(f"meeting:{name}:time", " ".join(value.split()).lower())
    return None


_JOB_NOUN = r"(?:role|job|position|employer|salary|boss|colleagues|offer|gig|promotion|contract)"
_JOB_WORDS = lazy(rf"\b(?:{_JOB_NOUN}|hired)\b", re.I)
# a job that is someone else's ("my husband's new job", "her contract") or the reason for a
# move ("moved to Leeds for a new job"): the move is still to a place
_OTHERS_JOB = lazy(
    r"\b(?:(?:his|her|their|(?:my|our)\s+(?!(?:new|old|current|own|first|dream|next|last|day)\b)"
    rf"[a-z]+(?:'s|s'|s)?)\s+(?:(?:new|old|current)\s+)?{_JOB_NOUN}"
    r"|(?:for|because of|due to)(?:\s+(?:a|an|the|my|our))?(?:\s+new)?\s+job)\b",
    re.I,
)
# a statement about the past, or a one-off, fills no standing slot ("I worked at Google
# years ago", "standup is at 10 this week only")
_BYGONE = lazy(
    r"\b(?:ago|used to|back then|formerly|in the past|as a (?:kid|child|student|teen)"
    r"|growing up|grew up|when i was|(?:this|next) (?:week|time|once) only|just (?:this|for)"
    r" (?:once|today|this week|tomorrow)|(?:today|tomorrow|tonight) only|for today|just today)\b",
    re.I,
)


# "we moved there", "so we moved last month": a move whose place the clause before named
_MOVED_THERE = lazy(
    r"\b(?:moved|relocated|move|moving)\b(?:\s+(?P<there>there|here)\b"
    r"|(?!\s+(?:to|into|from|out|in|on|away|back|house|over|up|down|forward|ahead|along"
    r"|the|a|an|my|our|your|his|her|their|its|it|them|this|that|these|those|everything|all)\b))",
    re.I,
)
_IN_PLACE = lazy(rf"\bin\s+(?!(?i:{CALENDAR_WORD}))(?P<value>{_PLACE})")
# what is somewhere: a bare "we moved" takes the place only of one of these ("a job at the
# hospital in X", "her new post is in X"), not of "I work in Marketing"
_SITED = lazy(
    r"\b(?:job|post|position|role|offer|contract|placement|house|flat|apartment|home|place"
    r"|hospital|university|school|office|company|firm|family|parents)\b[^,.;!?]{0,40}?$",
    re.I,
)


def moved_there(core: str, before: str) -> str:
    """A clause about a move that names no place ("so we moved there", "we moved last month"),
    with the place the clause before it named ("... a job at the hospital in Zwolle"):
    "so we moved to Zwolle"; any other clause as it is. A bare "moved" takes only the place
    of something sited there (a job, a home, a school)."""
    move = _MOVED_THERE.search(core)
    places = list(_IN_PLACE.finditer(before)) if move and before else []
    if not places or not _FIRST_PERSON.search(core[: move.start()]):
        return core
    last, there = places[-1], move.group("there")
    if not there and not _SITED.search(before[: last.start()]):
        return core
    place = f"to {last.group('value')}"
    if there:
        return f"{core[: move.start('there')]}{place}{core[move.end('there') :]}"
    return f"{core[: move.end()]} {place}{core[move.end() :]}"


def filled(core: str) -> Filled | None:
    """The slot a first-person statement fills and its value, or None ("I live in Berlin"
    -> identity:location = Berlin; "standup moved to 10" -> meeting:standup:time = 10)."""
    text = " ".join(core.replace("’", "'").split())
    if _BYGONE.search(text):
        return None
    meeting = _meeting(text)
    if meeting is not None:
        return meeting
    taken = _taken(text)
    for slot, patterns in _ATTRIBUTES:
        for pattern in patterns:
            match = pattern.search(text)
            if match is None:
                continue
            value = match.group("value")
            if _lexical(value) is not None:
                break  # "moved to VS Code": a tool, not a place
            if pattern.pattern == _MOVED_TO and _JOB_WORDS.search(_OTHERS_JOB.sub(" ", text)):
                slot = "identity:employer"  # "moved to Deliveroo, same kind of data role"
            return Filled(slot, value.rstrip(".,;"))
    return taken


# What a statement says its subject left, by name: "left Contoso", "dropped Visio",
# "switched from Todoist to ...", "cut out the wine", "no more afternoon coffee". A line of
# the subject's that names it states the old value, whatever slot (or none) either fills.
_LEFT = lazy(
    r"\b(?:(?P<named>left|moved (?:away )?from|moved out of)\s+(?=[A-Z])"
    r"|(?:quit|quitting|dropped|dropping|ditched|ditching|gave up(?: on)?|given up(?: on)?"
    r"|giving up(?: on)?|cut out|stopped(?: using| drinking| having)?|no more|moved on from"
    r"|cancell?ed|uninstalled|deleted|binned"
    r"|switched (?:away )?from|migrated (?:away )?from|replaced|instead of|swapped)\s+)"
    r"(?:(?:the|my|our|using|drinking|having|my old)\s+)?"
    r"(?P<value>(?-i:[A-Z0-9][\w&'’.+-]*(?:\s+(?-i:[A-Z0-9])[\w&'’.+-]*){0,2})"
    r"|[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)"
    r"(?=\s*(?:[,.;:!?)]|$|\s(?:and|to|for|with|in|at|since|because|now|this|last|after"
    r"|before|completely|altogether|entirely|though|but|so|as|on|of)\b))",
    re.I,
)
# "switched my backups from Time Machine to Backblaze"
_FROM_TO = lazy(
    r"\b(?:switched|switching|moved|moving|migrated|changed|swapped|went)\b[^.;]*?\bfrom\s+"
    r"(?P<value>(?-i:[A-Z0-9][\w&'’.+-]*(?:\s+(?-i:[A-Z0-9])[\w&'’.+-]*){0,2}))"
    r"\s+(?:to|over to|for|onto)\b",
    re.I,
)
_NOT_LEFT = {"it", "that", "this", "them", "job", "work", "there", "here", "home", "town"}


def left_values(core: str) -> list[str]:
    """The things a statement says its subject left or gave up, each as the word(s) an older
    statement would name it by (a name whole, else the last word: "afternoon coffee" ->
    "coffee"); [] when it leaves nothing by name."""
    text = " ".join(core.replace("’", "'").split())
    out: list[str] = [m.group("value") for m in _FROM_TO.finditer(text)]
    for match in _LEFT.finditer(text):
        value = match.group("value").strip(" .,'")
        named = value[:1].isupper() or value[:1].isdigit()
        if not named:
            if match.group("named"):
                continue  # "left the office": only a named place or employer is left
            value = value.split()[-1]
            value = value[:-1] if value.endswith("s") and not value.endswith("ss") else value
        if value.lower() not in _NOT_LEFT and len(value) > 1:
            out.append(value)
    return list(dict.fromkeys(out))


def names_value(text: str, value: str) -> bool:
    """Whether `text` names `value` as a word (or its plural: "lattes")."""
    pattern = rf"(?<![\w-]){re.escape(value)}(?:e?s)?(?![\w-])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def slot_of_statement(core: str) -> str | None:
    """The slot of a first-person statement, or None."""
    found = filled(core)
    return found.slot if found else None


def same_slot(a: str | None, b: str | None) -> bool:
    """Whether two slots are the same attribute: equal, or one the other with a qualifier
    ("habit:drink" and "habit:drink:morning"; not "habit:drink:evening")."""
    if not a or not b:
        return False
    return a == b or a.startswith(b + ":") or b.startswith(a + ":")


KIND_OF_SLOT = {"identity": "identity", "tool": "preference", "habit": "preference"}


def capture_kind(slot: str) -> str:
    """The capture kind a statement filling `slot` is stored as (so both the old and the
    new statement reach the same note): identity, preference or event."""
    return KIND_OF_SLOT.get(slot.split(":", 1)[0], "event")


_INDEX_WORDS = {
    "identity:location": "live lives living home based location residence city",
    "identity:employer": "work works job employer company",
}


def index_words(slot: str) -> str:
    """Words a question about `slot` asks with, indexed beside a line filling it, so "where
    does the user live" finds "we relocated to Madrid" whatever verb the line used."""
    if slot in _INDEX_WORDS:
        return _INDEX_WORDS[slot]
    parts = slot.split(":")
    if parts[0] == "tool":
        return f"{parts[1]} tool use uses"
    if parts[0] == "habit":
        return " ".join([*parts[1:], "drinks" if parts[1] == "drink" else "", "habit"]).strip()
    if parts[0] == "meeting":
        return f"{parts[1]} meeting time when"
    return ""


_SLOT_WORDS = {
    "identity:location": "live lives lived living moved relocated based home",
    "identity:employer": "work works worked working job joined left employer company",
}


def slot_words(slot: str) -> str:
    """Words an older statement of `slot` likely has, for finding it by search ("I drink tea"
    for "switched to coffee": the other drinks)."""
    if slot in _SLOT_WORDS:
        return _SLOT_WORDS[slot]
    parts = slot.split(":")
    if parts[0] in ("tool", "habit") and len(parts) > 1:
        return " ".join(LEXICON.get(parts[1], ())) + f" {parts[1]}"
    if parts[0] == "meeting" and len(parts) > 1:
        return parts[1]
    return ""
