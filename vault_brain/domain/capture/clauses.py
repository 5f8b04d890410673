"""Clauses of chat prose for offline capture, and the clauses that state no fact.

A chat message often packs several facts into one run-on sentence ("i'm dev. backend dev at
X — we're rebuilding Y, so it ships in May"), so a gate sentence is split further: at
sentence ends in any case, semicolons, dashes that open a new clause, "..., and I ..." and
"..., so ...". A clause is then set aside when it is a question, a hypothetical or vague
maybe, a passing state ("so tired today") or a request to the assistant.
"""

from __future__ import annotations

import re

from vault_brain.domain.capture.engine import hits
from vault_brain.domain.capture.slots import filled, left_values
from vault_brain.domain.capture.words import DATE, JOB, NAME_SEQ, NAME_WORD, NOT_NAMES, TITLE

_ABBREVIATION_END = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|Mt|Jr|Sr|vs|etc|e\.g|i\.e|approx)|\b[A-Z])\.$"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_SEMICOLON = re.compile(r";\s+")
_DASH = re.compile(r"\s+(?:[—–]|--?)\s+")
# Where a new clause with its own first-person subject begins: "... and I'm", ", but we".
_AND_I = re.compile(
    r",?\s+(?:and|but)\s+(?:that\s+)?(?=(?:i|we)(?:'m|'ve|'re|'ll|'d)?\s+"
    r"(?!are\b|were\b|both\b|have\s+been\b|will\s+be\b))",
    re.IGNORECASE,
)
# "..., can you help plan?": the request after a statement.
_ASK = re.compile(
    r",\s+(?=(?:can|could|would|will)\s+you\b|any\s+(?:idea|ideas|tips|thoughts)\b"
    r"|what\s+do\s+you\s+think\b|thoughts\s*\?"
    r"|(?:how|what|when|where|which|why|who|is|are|does|do|did|can|could|should|shall|would"
    r"|will|was)\b[^,]*\?\s*$)",
    re.IGNORECASE,
)
# "..., so the commute is short": a consequence, split off unless "so" is an intensifier.
_SO = re.compile(
    r",?\s+so\s+(?!(?:much|many|far|long|that|it\s+is|well|good|bad|nice|very)\b)(?=\S+\s+\S+)",
    re.IGNORECASE,
)
_SO_AFTER_BE = re.compile(
    r"(?:\b(?:am|is|are|was|were|be|feel|feels|not|and|or)|['’]m|['’]s|['’]re)$", re.IGNORECASE
)
# The right side of a dash that starts a clause of its own.
_CLAUSE_START = re.compile(
    r"(?:i|i'm|i've|i'd|i'll|im|we|we're|we've|we'll|you|he|she|they|it|it's|there|this|that"
    r"|my|our|let's|lets|please|pls|also|and|but|so|always|never|don't|do not)\b",
    re.IGNORECASE,
)


# Contractions chat often types without the apostrophe; only forms that are no other word.
_BARE_CONTRACTIONS = {
    "dont": "don't", "cant": "can't", "wont": "won't", "doesnt": "doesn't", "didnt": "didn't",
    "isnt": "isn't", "arent": "aren't", "wasnt": "wasn't", "werent": "weren't",
    "havent": "haven't", "hasnt": "hasn't", "couldnt": "couldn't", "wouldnt": "wouldn't",
    "shouldnt": "shouldn't", "im": "i'm", "ive": "i've", "youre": "you're", "theyre": "they're",
    "thats": "that's", "whats": "what's", "weve": "we've", "shes": "she's", "hes": "he's",
}  # fmt: skip
_BARE = re.compile(r"\b(" + "|".join(_BARE_CONTRACTIONS) + r")\b", re.IGNORECASE)


def normalise(sentence: str) -> str:
    """Typographic apostrophes made plain and apostrophe-less contractions ("dont", "ive")
    spelled out, so one pattern reads every spelling."""
    plain = sentence.replace("’", "'").replace("‘", "'")

    def spelled(match: re.Match[str]) -> str:
        word = _BARE_CONTRACTIONS[match.group().lower()]
        return word[:1].upper() + word[1:] if match.group()[:1].isupper() else word

    return _BARE.sub(spelled, plain)


def rejoin(sentences: list[str], content: str) -> list[str]:
    """Sentences as given, with a split after a title or an initial ("Dr.", "Prof.", "A.")
    undone when the two pieces stand side by side in the message."""
    out: list[str] = []
    for sentence in sentences:
        if out and _ABBREVIATION_END.search(out[-1]):
            joined = re.escape(out[-1]) + r"\s+" + re.escape(sentence)
            if re.search(joined, content):
                out[-1] = f"{out[-1]} {sentence}"
                continue
        out.append(sentence)
    return out


def _outside_brackets(text: str, start: int) -> bool:
    depth = 0
    for ch in text[:start]:
        depth += ch == "("
        depth -= ch == ")" and depth > 0
    return depth == 0


def _cut(text: str, pattern: re.Pattern[str], keep: bool = False) -> list[str]:
    """Pieces of `text` split where `pattern` matches outside brackets."""
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        if _outside_brackets(text, match.start()):
            pieces.append(text[start : match.start()] + (match.group() if keep else ""))
            start = match.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip(" ,.;")]


def _sentence_pieces(sentence: str) -> list[str]:
    pieces: list[str] = []
    for piece in _cut(sentence, _SENTENCE_END, keep=True):
        if pieces and _ABBREVIATION_END.search(pieces[-1].rstrip()):
            pieces[-1] = f"{pieces[-1].rstrip()} {piece}"
        else:
            pieces.append(piece)
    return pieces


_ROLE_HERE = re.compile(rf"^\W*(?:[\w'’-]+\s+){{0,2}}(?i:{JOB})\s+(?i:here)\W*$")


def _splits_at_dash(left: str, right: str) -> bool:
    """A dash separates two clauses when the left is only an opener ("Also remind me") or the
    right starts a clause of its own; not for an apposition ("Mrs Kay — Ann Kay")."""
    if _ROLE_HERE.match(left):  # "Chef here — I run the kitchen at ...": one introduction
        return False
    left_last = re.findall(NAME_WORD, left[-40:])
    right_first = re.match(rf"{TITLE}?({NAME_SEQ})", right)
    if left_last and right_first and set(right_first.group(1).split()) & set(left_last):
        return False
    return len(left.split()) <= 3 or bool(_CLAUSE_START.match(right))


def _dash_pieces(clause: str) -> list[str]:
    pieces = [clause]
    dashes = [m for m in _DASH.finditer(clause) if _outside_brackets(clause, m.start())]
    for match in reversed(dashes):
        left, right = pieces[0][: match.start()], pieces[0][match.end() :]
        if _splits_at_dash(left, right):
            pieces = [left, right, *pieces[1:]]
    return [p.strip() for p in pieces if p.strip(" ,.;")]


def _so_pieces(clause: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _SO.finditer(clause):
        before = clause[start : match.start()]
        if len(before.split()) >= 2 and not _SO_AFTER_BE.search(before):
            pieces.append(before)
            start = match.end()
    pieces.append(clause[start:])
    return [p.strip() for p in pieces if p.strip(" ,.;")]


# "Mention that I sail", "remember that we're vegan": a request whose content is a statement
# about the user.
_TELL_THAT = re.compile(
    r"^(?:(?:please|pls|and|also|oh)\s+)*(?:mention|say|note|add|include|remember|know"
    r"|keep\s+in\s+mind|bear\s+in\s+mind|put\s+in)\s+that\s+(?=(?:i|i'm|i've|my|we|we're|our)\b)",
    re.IGNORECASE,
)


def split_clauses(sentence: str) -> list[str]:
    """The clauses of one sentence, in order: split at sentence ends in any case, semicolons,
    dashes that start a new clause, "and I ..." and "so ..." (never inside brackets); a
    "mention that ..." lead is dropped from a statement about the user."""
    out: list[str] = []
    for piece in _sentence_pieces(sentence):
        for part in _cut(piece, _SEMICOLON):
            for dashed in _dash_pieces(part):
                for asked in _cut(dashed, _ASK):
                    for clause in _cut(asked, _AND_I):
                        out.extend(_so_pieces(clause))
    return [_TELL_THAT.sub("", clause, count=1) for clause in out]


# What replaces the thing the clause before gave up: "I've stopped the smoothies; (every
# morning) it's porridge now".
_LEAVES = re.compile(
    r"\b(?:stopped|quit|gave up|given up|dropped|ditched|cut out|no more|left|cancell?ed"
    r"|uninstalled|deleted)\b",
    re.IGNORECASE,
)
_NOW = re.compile(r"\b(?:now|instead|these days|nowadays)\b", re.IGNORECASE)
_REPLACING = re.compile(
    r"^(?:[\w ]{0,30}?\s)?(?:it'?s|it is|now it'?s)\s+(?:[\w-]+\s+){1,2}?"
    r"(?:now|instead|these days|nowadays)\b",
    re.IGNORECASE,
)


def _replaces(left: str, core: str) -> bool:
    """Whether `core` names what replaces the thing clause `left` gave up ("it's porridge
    now"; "I'm drafting in Google Docs now" after "I dropped Ulysses"): one statement, so
    the old value is never stored alone."""
    if _REPLACING.search(core) or (left_values(left) and _NOW.search(core)):
        return True  # "I cancelled YNAB and I budget in a spreadsheet now"
    return (found := filled(f"{left.rstrip(' ;,.')}; {core}")) is not None and (
        found.value.lower() not in left.lower()
    )


# Pointing back at the clause before: "let's lock that in", "that's final".
_ANAPHORIC_DECISION = re.compile(
    r"^(?:let'?s\s+(?:do|go with|lock|book|stick with|keep)\s+(?:that|it|this)(?:\s+in)?"
    r"|(?:that|it)'?s\s+(?:decided|final|the plan|settled)|(?:go|going)\s+with\s+(?:that|it|this)"
    r"|(?:do|book|lock)\s+(?:that|it)(?:\s+in)?)\W*$",
    re.IGNORECASE,
)
# "We agreed it at the meeting", "decided that yesterday": a decision about the clause before.
_ANAPHORIC_AGREED = re.compile(
    r"^(?:(?:we|i)(?:'ve|\s+have|\s+all)?\s+)?(?:just\s+|already\s+)?(?:agreed|decided|settled"
    r"|confirmed|approved|voted\s+(?:for|on)|signed\s+off(?:\s+on)?)\s+(?:on\s+)?(?:it|that|this"
    r"|them)\b(?:\s+\S+){0,5}\W*$",
    re.IGNORECASE,
)
# "It's on 3 June" right after the clause naming the event, whatever follows it.
_ANAPHORIC_DATE = re.compile(
    r"^(?:it|that|this)(?:'s|’s|\s+is|\s+was|\s+will\s+be)\s+(?:on|in|at|from|until|till|due)\b",
    re.IGNORECASE,
)


# "due 28 March", "on Friday", "next week": a date with no clause of its own.
_DATE_LEAD = re.compile(
    r"^(?:(?:it's|it is|all|both)\s+)?(?:due|by|on|from|until|till|starting|starts|ends|before"
    r"|after|around|for)?\s*",
    re.IGNORECASE,
)


def _only_date(core: str) -> bool:
    """A fragment that only dates the clause before ("due 28 March", "by Friday")."""
    rest = _DATE_LEAD.sub("", core, count=1)
    match = DATE.match(rest)
    if match is None:
        return False
    return len(rest[match.end() :].split()) <= 2 and len(core.split()) <= 6


def merge_anaphoric(clauses: list[str]) -> list[str]:
    """A clause that only points back ("let's lock that in", "it's on 3 June", "we agreed it
    at the meeting", "due 28 March") joined to the clause it points to."""
    out: list[str] = []
    for clause in clauses:
        core = strip_fillers(clause)
        if out and (
            _ANAPHORIC_DECISION.match(core)
            or _ANAPHORIC_AGREED.match(core)
            or (_ANAPHORIC_DATE.match(core) and DATE.search(core))
            or _only_date(core)
        ):
            out[-1] = f"{out[-1].rstrip()} {clause}"
        elif out and _LEAVES.search(out[-1]) and _replaces(out[-1], core):
            out[-1] = f"{out[-1].rstrip().rstrip(';,.')}; {clause}"
        else:
            out.append(clause)
    return out


# ---------------------------------------------------------------------------------------
# what a clause is not

_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|yeah|yes|yep|yup|nah|oh|ah|and|also|plus|but|btw|fyi|fwiw|anyway"
    r"|well|hey|hi(?:\s+there)?|hello|um|uh|hmm|tbh|lol|haha|oops|right|sound|cheers|great"
    r"|perfect|cool|nice|sure|alright|morning|ugh|honestly|actually|basically|personally"
    r"|one more thing|by the way|for the record|oh and|no(?=\s*,))(?:\b|(?<=\W))[\s,.!:;—–-]*)+",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^[^:()\d]{2,40}:\s+(?=\S)")
_TAG_QUESTION = re.compile(
    r",?\s*(?:right|yeah|yes|correct|no|ok|okay|yep|isn't it|didn't we|don't we|wasn't it"
    r"|aren't we)\s*\?+\s*$",
    re.IGNORECASE,
)


def strip_fillers(clause: str) -> str:
    """The clause without leading interjections ("ok so", "btw", "yeah,") and trailing
    sentence punctuation."""
    core = _FILLER.sub("", clause.strip()).strip()
    return core.rstrip(" .!").strip()


def strip_label(clause: str) -> str:
    """The clause without a short leading label ("One thing: ..."), when it has one."""
    return _LABEL.sub("", clause, count=1)


def without_tag(core: str) -> str:
    """ "We said Sunday, right?" -> "We said Sunday"."""
    return _TAG_QUESTION.sub("", core).strip() or core


def is_question(clause: str) -> bool:
    """A question (a tag question asking to confirm a statement is not one)."""
    text = clause.strip().rstrip(")\"'”’ ")
    if _TAG_QUESTION.search(text):
        return False
    return text.endswith("?") or hits("not:question", strip_label(text))


def is_hypothetical(clause: str) -> bool:
    """ "If I were...", "what if...", "maybe one day...": nothing that holds."""
    if hits("not:if-ask", clause):  # "if something looks wrong, tell me straight"
        return hits("not:vague", clause)
    return hits("not:hypothetical", clause) or hits("not:vague", clause)


def is_transient(clause: str) -> bool:
    """A passing state ("so wiped today", "right now")."""
    return hits("not:transient", clause)


def is_request(clause: str) -> bool:
    """An ask of the assistant ("can you...", "give me...", "please draft...")."""
    return hits("not:request", strip_label(clause))


_ACCEPT = re.compile(
    r"^(?:yes|yeah|yep|sure|ok|okay|sounds good|perfect|great|good|lovely|let's do (?:that|it)"
    r"|do it|go for it|go ahead|please do|that works|deal|agreed|yes please)\W*$",
    re.IGNORECASE,
)


def only_acceptance(sentences: list[str]) -> bool:
    """A user message that only says yes to what the assistant proposed."""
    pieces = [c for s in sentences for c in split_clauses(s)]
    return bool(pieces) and all(_ACCEPT.match(p.strip()) for p in pieces)


_CONFIRM = re.compile(
    r"^(?:done|noted|deal|locked in|agreed|confirmed|booked|updated|settled|great|perfect"
    r"|got it)\b[\s,.:!—–-]+(?P<rest>\S.*)$",
    re.IGNORECASE,
)


def confirmation(sentence: str) -> str | None:
    """What an assistant sentence confirms ("Done: a status note every Friday")."""
    match = _CONFIRM.match(sentence.strip())
    if not match or len(match.group("rest").split()) < 3 or is_question(match.group("rest")):
        return None
    return match.group("rest").rstrip(" .!")


# ---------------------------------------------------------------------------------------
# answers to the assistant's questions


def answer_slot(core: str, asked: list[str]) -> str | None:
    """The slot a short reply fills when the assistant just asked for it ("Where are you
    based?" -> "Just outside Leeds"); of several asked at once ("your name, what you do and
    where you're based?"), the first the reply fits, in the order they were asked."""
    if len(core.split()) > 10:
        return None
    names = [w for w in re.findall(NAME_WORD, core) if w not in NOT_NAMES]
    for slot in asked:
        if slot == "identity:role" and re.search(rf"\b(?i:{JOB})s?\b", core):
            return slot
        if slot == "identity:name" and names:
            terse = len(core.split()) <= 4 and not re.search(rf"\b(?i:{JOB})s?\b", core)
            if len(asked) == 1 or terse:
                return slot
        elif (slot in ("identity:location", "identity:employer") and names) or (
            slot in ("preference", "decision") and len(core.split()) >= 2
        ):
            return slot
    return None


_ASKED = (
    ("identity:name", re.compile(r"\b(?:your name|what should i call you|who am i talking to)\b")),
    (
        "identity:location",
        re.compile(
            r"\bwhere (?:are you (?:based|located|from|living)|do you"
            r" live|abouts)\b|\bwhich (?:city|country|town)\b"
        ),
    ),
    (
        "identity:employer",
        re.compile(
            r"\bwhere do you work\b|\bwhich company\b|\bwho do you work"
            r" for\b"
        ),
    ),
    (
        "identity:role",
        re.compile(
            r"\bwhat do you do\b|\byour (?:job|role|profession|occupation)\b"
            r"|\bwhat (?:kind of )?work\b"
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(?:tone|style|format|prefer|preference|preferences|favourite"
            r"|favorite|how do you like)\b"
        ),
    ),
    (
        "decision",
        re.compile(
            r"\b(?:which|would you like|do you want|shall i|should i|should we)"
            r"\b.*\bor\b"
        ),
    ),
)


def asked(sentences: list[str]) -> list[str]:
    """The slots the assistant's last question asks the user for, in the order asked."""
    questions = [s.lower() for s in sentences if s.rstrip().endswith("?")]
    if not questions:
        return []
    found = [(m.start(), slot) for slot, p in _ASKED if (m := p.search(questions[-1]))]
    return [slot for _, slot in sorted(found)]
