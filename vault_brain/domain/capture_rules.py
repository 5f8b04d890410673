"""Which clause states one of the user's own facts, for offline capture: identity (name,
role, employer, location) or preference (decisions and events are in capture_decisions.py).

Every rule is a general pattern of chat English over closed word classes
(capture_words.py); none is tied to a particular conversation.
"""

from __future__ import annotations

import re

from vault_brain.domain.capture_words import (
    DEMONYM,
    DEPARTMENT,
    INSTRUMENT,
    JOB,
    NAME_SEQ,
    NAME_WORD,
    NOT_NAMES,
    ORG_NOUN,
    STYLE_NOUN,
    TITLE,
)
from vault_brain.domain.lazy_re import lazy

_I = r"(?:i|im|i'm|i’m)"
_LEAD = r"^(?:[^:()]{1,40}:\s+)?"
_ADV = (
    r"(?:(?:really|also|just|absolutely|honestly|generally|definitely|much|strongly|truly"
    r"|totally|kinda|still|only|both|personally|do|already|now|currently|actually"
    r"|horribly|terribly|seriously|badly|easily|genuinely|massively|hugely|desperately|properly"
    r"|mostly|usually|normally|typically|hardly|barely|mainly)\s+)*"
)
# Lower-case words after "i'm" that are no name ("i'm tired, nurse life").
_NOT_LOWER_NAME = (
    r"(?:fine|tired|good|ok|okay|back|here|new|sorry|stuck|lost|confused|happy|sure|ready|done"
    r"|busy|not|also|just|still|now|so|a|an|the|very|really|from|in|at|on|currently|actually"
    r"|retired|freelance|self|working|studying|exhausted|sick|ill|well|home|off|out|over)"
)
_DEGREE = r"(?:phd|master's|masters|degree|ba|bsc|msc|mba|doctorate|residency|apprenticeship)"
_NAME_INTRO = lazy(
    rf"{_LEAD}(?:(?i:i'?m|i’m|i am|this is|it's|soy|je suis|ich bin|sono|eu sou)\s+{TITLE}?"
    rf"(?P<a>{NAME_SEQ})(?:\s*,|\s*$|\s+(?i:by"
    rf"\s+the\s+way|btw|here|and|from|again|\())|(?P<b>{NAME_SEQ})\s+(?i:here)\b)"
    rf"|(?i:\bmy\s+name(?:'s|\s+is)|(?<!\w\s)(?<!\w)name's|\bcall\s+me|\bi\s+go\s+by"
    rf"|\bfull\s+name\s+is|\b(?:my\s+)?name\s+(?:on|for|in)\s+(?:the|my)\s+[\w-]+(?:\s+[\w-]+)?"
    rf"\s+(?:should\s+be|is|will\s+be|must\s+be|:))\s+{TITLE}?(?P<c>{NAME_SEQ})"
    rf"|(?i:\bsign-?off|\bsignature|\bsign\s+(?:it|this|them|off|the\s+\w+)\s+(?:as|from|with))\b"
    rf".*?\s{TITLE}?(?P<d>{NAME_SEQ})"
    rf"|^(?i:name)\s*:\s*{TITLE}?(?P<f>{NAME_SEQ})"
    rf"|^(?i:i'?m|i am)\s+\w+\s+\((?P<e>{NAME_WORD})"
    # "context: i'm ana, qa engineer at X": a lowercase name, then a job
    rf"|{_LEAD}(?i:i'?m|i am)\s+(?P<g>(?!{_NOT_LOWER_NAME}\b)[a-z][a-z'-]{{1,20}}),\s+"
    rf"(?:(?i:a|an|the)\s+)?(?:[\w'’-]+\s+){{0,3}}?(?i:{JOB})s?\b"
)
_JUDGED = (
    r"(?!(?i:terrible|bad|awful|good|great|decent|rubbish|lousy|horrible|amazing|better|worse"
    r"|hopeless|natural|born|total|complete|huge|big|massive|typical|proper)\b)"
)
_ROLE = lazy(
    rf"(?<![\w'’])(?i:{_I}|i am|i've been|i was)\s+{_ADV}(?:\d+,?\s+)?(?i:a|an|the)\s+{_JUDGED}"
    rf"(?:[\w'’-]+\s+){{0,4}}?(?i:{JOB})s?\b"
    rf"|(?<![\w'’])(?i:{_I}|i am)\s+{_ADV}(?i:{JOB})\b"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:work|am working|'m working)\s+(?i:as|on)\b"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:work)\s+(?:[\w'’-]+\s+){{1,3}}(?i:for|at|as)\s"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:do|handle|run|manage|look\s+after)\s+(?i:the|our|all\s+the)\s+"
    rf"[\w'’-]+\s+(?i:for|at)\s"
    rf"|(?<![\w'’])(?i:{_I}|i\s+work|i am)\s+{_ADV}(?i:in)\s+(?i:{DEPARTMENT})"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:teach|lecture|study|studied|coach|practise|practice|nurse)\s"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:lead|run|manage|own|head|direct|chair|founded|co-founded"
    rf"|co-own|head\s+up)\s+(?i:a|an|the|my|our)\s"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:play)\s+(?:the\s+)?(?:\w+\s+)?(?i:{INSTRUMENT})\s+"
    rf"(?i:in|for|with)\s|(?<![\w'’])(?i:i)\s+(?i:sing|play\s+(?:the\s+)?(?:\w+\s+)?(?i:{INSTRUMENT}))"
    rf"\b(?=.*\b(?i:band|choir|orchestra|group|quartet|trio)\b|,)"
    rf"|(?<![\w'’])(?i:{_I}|i am)\s+{_ADV}(?i:self-employed|retired|freelance|a\s+freelancer"
    rf"|unemployed|between\s+jobs|a\s+stay-at-home|studying|reading|teaching|training\s+to\s+be"
    rf"|doing\s+(?:a|an|my)\s+{_DEGREE}|on\s+the\s+(?:[\w'’-]+\s+){{1,3}}team)"
    rf"|(?i:\bmy\s+(?:phd|thesis|dissertation|doctorate|master's|masters|degree|research)"
    rf"\s+(?:is\s+)?(?:on|in|about)\b)"
    rf"|(?<![\w'’])(?i:i)\s+{_ADV}(?i:manage|run|handle|look\s+after)\s+(?-i:[A-Z]{{2,}})\s+"
    rf"(?i:for|at)\s"
    rf"|(?i:\bin\s+my\s+\w+\s+year\s+(?:of|at)\b|\bin\s+(?:year|grade)\s+\d+\b"
    rf"|\b\d+(?:st|nd|rd|th)\s+grade\b|\bfor\s+a\s+living\b|\bemployed\s+(?:at|by)\b)"
    rf"|(?i:^as\s+an?\s+)(?:[\w'’-]+\s+){{0,2}}(?i:{JOB})\b"
    rf"|(?i:\b(?:started|start|got|landed|took|accepted|began)\s+(?:a\s+|my\s+)?(?:new\s+)?"
    rf"(?:job|position|role)\s+(?:at|with|as)\b)"
    rf"|(?i:^|\()(?:(?i:new|my|day)\s+)?(?i:job|day\s+job)\s*(?::|\s+at\b|\s+is\b|\s+as\b)"
    rf"|^(?:[\w'’-]+\s+){{0,2}}(?i:{JOB})\s+(?i:here)\b"
    r"|^\d+\s*(?i:years?|yrs?|months?)\s+(?i:at|with|as|in)\s"
    r"|^(?i:job|work|role|occupation|profession|day\s+job)\s*[:—–-]\s*\S"
    r"|^(?i:i'?m|i am)\b.*\b(?i:and)\s+(?i:work|teach)\s+(?i:as|at|for|in)\s"
    r"|(?<![\w'’])(?i:i'?m|i am)\s+(?i:in\s+charge\s+of|responsible\s+for|(?:the\s+)?head\s+of)\s"
    r"|^(?i:(?:currently\s+|now\s+|just\s+)?(?:working|started|starting|studying|training)\s+"
    r"(?!(?:has|have|is|was|will|can|must|needs|should|takes|means)\b)(?:at|as|for|in|with)?\s*)\S"
    r"|(?<![\w'’])(?i:i\s+work\s+in\s+(?:a|an|the)\s)"
    # "I'm the only backend person", "I'm the resident data guy"
    r"|(?<![\w'’])(?i:i'?m|i am)\s+(?i:the|our)\s+(?i:only|sole|main|lone|resident|go-to|one)\s+"
    r"(?:[\w-]+\s+){1,2}(?i:person|guy|gal|girl|expert|specialist|wizard|nerd)\b"
    # "marking essays for my Year 11 English class": a teacher, by the class they teach
    r"|\b(?i:my)\s+(?:(?i:year|grade|form)\s+\d+\s+|\d+(?:st|nd|rd|th)\s+(?i:grade)\s+)"
    r"(?:[\w-]+\s+){0,2}(?i:class|classes|students|pupils|set|group|kids)\b"
    r"|(?<![\w'’])(?i:i'?m|i am|i)\s+(?:\w+\s+)?(?i:marking|grading|teach|teaching)\s+.*"
    r"\b(?i:my)\s+(?:[\w-]+\s+){0,3}(?i:class|classes|students|pupils)\b"
    # "I handle the business side", "I do the painting and the shop"
    r"|(?<![\w'’])(?i:i)\s+(?i:handle|run|do|look\s+after|take\s+care\s+of)\s+(?i:the|all\s+the)\s+"
    r"(?:[\w-]+\s+){0,2}(?i:side|end|admin|books|accounts|ops|operations|kitchen|front\s+of\s+house)\b"
    r"|(?<![\w'’])(?i:i'?ve\s+been\s+(?:teaching|nursing|working|practising|practicing|lecturing"
    r"|coaching|coding|programming|farming)\s+(?:for|since|at|as|in)\s)"
)
# A clause with no verb that is only a job ("freelance illustrator", "backend dev at X").
_BARE_ROLE = lazy(
    rf"^(?!(?i:my|our|his|her|their|the|a|an|your|no|not)\b)(?:[\w-]+(?:['’]s)?\s+){{0,3}}(?i:ex-)?"
    rf"(?i:{JOB})"
    rf"(?:\s+(?i:at|for|in|with)\s|\s*[,—–(]|\s*$)"
)
_EMPLOYER = lazy(
    r"^(?i:employer|company|workplace)\s*:\s*\S|"
    rf"(?i:\bwe'?re|\bwe\s+are)\s+(?i:a|an)\s+(?:[\w'’-]+\s+){{0,3}}?(?i:{ORG_NOUN})\b"
    rf"|(?i:\bwe\s+(?:run|own|have))\s+(?i:a|an)\s+(?:[\w'’-]+\s+){{0,3}}?(?i:{ORG_NOUN})\b"
    rf"|(?i:\b(?:my|our)\s+(?:company|employer|firm|school|university|startup|workplace)"
    rf"(?:\s+is|,))\s+{NAME_SEQ}"
    rf"|(?:^|,\s*|\b(?i:and)\s+)(?i:i'?m|i am)\s+(?i:at|with)\s+{NAME_SEQ}"
    rf"|(?i:\bmy\s+(?:own\s+)?)(?i:{ORG_NOUN}),?\s+(?:(?i:called|named)\s+)?{NAME_SEQ}"
    rf"|(?<![\w'’])(?i:i|we)\s+(?i:run|own|founded|co-founded|started|set\s+up)\s+{NAME_SEQ}"
    rf"|(?i:\bwe'?re|\bwe\s+are|\bthe\s+band\s+is)\s+(?i:called|named)\s+{NAME_SEQ}"
    rf"|(?i:\bi\s+{_ADV}(?:work|am working|'m working))\s+(?i:at|for)\s"
    # "I'm debugging our webhook receiver at Orchard Analytics": work on "our" thing there
    rf"|^(?i:i'?m|i am|we'?re|we are)\s+(?i:debugging|building|fixing|maintaining|migrating"
    rf"|deploying|testing|refactoring|redesigning|rebuilding|rewriting|running|managing|setting\s+up"
    rf"|updating|upgrading|documenting|launching|onboarding|hiring\s+for)\s+(?i:our)\s+"
    rf"(?:[\w'’-]+\s+){{1,4}}?(?i:at)\s+{NAME_SEQ}"
)
# A business the user runs or owns, by name: "we're a 6-person startup, X", "I run the
# kitchen at X", "my bakery, X". Its "we" decisions and dated milestones are its own.
_BUSINESS = lazy(
    rf"(?i:\bwe'?re|\bwe\s+are|\b(?:i|we)\s+(?:run|own|have|founded|co-founded|started|set\s+up"
    rf"|co-own))\s+(?:(?i:a|an|the|my|our)\s+)?(?:[\w'’-]+\s+){{0,3}}?(?i:{ORG_NOUN})"
    rf"(?:\s+(?i:of|for)\s+[\w-]+)?(?:\s+(?i:in|at|near)\s+{NAME_WORD})?"
    rf"(?:,\s+(?:(?i:the\s+name\s+is|its\s+name\s+is|called|named)\s+)?|\s+(?i:at|called|named)\s+)"
    rf"(?P<name>{NAME_SEQ})"
    rf"|(?i:\bmy\s+(?:own\s+)?)(?:[\w'’-]+\s+){{0,2}}?(?i:{ORG_NOUN}),?\s+(?:(?i:called|named)\s+)?"
    rf"(?P<own>{NAME_SEQ})"
)


def business(core: str) -> str | None:
    """The name of a business the clause says the user runs or owns, if any."""
    match = _BUSINESS.search(core)
    if match is None:
        return None
    name = match.group("name") or match.group("own")
    return name if _real_name(name) else None


_LOCATION = lazy(
    r"\b(?:i|we)\s+(?:(?:just|recently|now|currently|still|also)\s+)?(?:live|lived|'ve lived"
    r"|have lived|am living|'m living|are living|'re living|moved|'ve moved|have moved"
    r"|relocated)\s+(?:in|to|near|outside|just outside|out to)\b"
    r"|\b(?:i'?m|i am|we'?re|we are)\s+(?:based|living|located)\s+(?:in|out of|near)\b"
    r"|\b(?:i'?m|i am)\s+(?:originally\s+)?from\s+(?-i:[A-Z])|\bworking\s+out\s+of\b"
    r"|^(?:i'?m|i am|we'?re|we are)\b.*\bliving\s+in\b"
    r"|^(?:currently\s+|now\s+)?(?:based|living|located)\s+(?:in|out\s+of|near)\s"
    r"|\b(?:originally\s+from|living\s+in)\s+(?-i:[A-Z])"
    r"|\bwork\s+(?:remotely\s+)?from\s+(?-i:[A-Z])"
    r"|^(?:location|based|home|city|hometown)\s*[:—–-]\s*(?-i:[A-Z])"
    r"|\bmy\s+(?:office|home|house|flat|apartment|place)\s+is\s+in\s+(?-i:[A-Z])"
    r"|\b(?:my|our)\s+(?:home|house|flat|apartment|place|farm)\s+(?:in|near|outside)\s+(?-i:[A-Z])"
    r"|^(?:i|we)\b.*\bthe\s+(?:house|home|farm)\s+in\s+(?-i:[A-Z])"
    r"|^(?:i'?m|i am|we'?re|we are)\s+(?:currently\s+|now\s+)?in\s+(?!(?:my|the|a|an|love"
    r"|charge|touch|pain|bed|town|trouble|need)\b)(?-i:[A-Z])",
    re.IGNORECASE,
)
_MOVING = lazy(r"\b(?:i'?m|i am|we'?re|we are)\s+(?:moving|relocating)\s+to\b", re.I)


_NATIONALITY = lazy(
    rf"\b(?i:i'?m|i’m|i am|we'?re|we are)\s+(?:(?i:a|half|proud)\s+)?(?:{DEMONYM})\b"
)


def is_identity(core: str) -> bool:
    """Whether a clause says who the user is: a slot below, or a nationality."""
    return identity_slot(core) is not None or bool(_NATIONALITY.search(core))


def identity_slot(core: str) -> str | None:
    """Which identity slot a clause about the user fills: name, role, employer or location
    (None for an identity fact that is not exclusive, such as a nationality)."""
    if _NATIONALITY.search(core):
        return None
    name = _NAME_INTRO.search(core)
    if name and _real_name(next(g for g in name.groups() if g)):
        return "identity:name"
    if _ROLE.search(core) or (_BARE_ROLE.match(core) and len(core.split()) <= 14):
        return "identity:role"
    if _EMPLOYER.search(core):
        return "identity:employer"
    if _LOCATION.search(core) and not _MOVING.search(core):
        return "identity:location"
    return None


_JOB_WORD = lazy(rf"(?i:{JOB})s?")


def _real_name(raw: str) -> bool:
    """Not a function word, and not a job ("Chef here" is a role, not a name)."""
    words = raw.split()
    return (
        bool(words)
        and words[0] not in NOT_NAMES
        and words[-1] not in NOT_NAMES
        and not (len(words) == 1 and _JOB_WORD.fullmatch(words[0]))
    )


# ---------------------------------------------------------------------------------------
# preferences

_LIKE_VERB = (
    r"(?:like|love|prefer|enjoy|hate|dislike|detest|loathe|adore|can't stand|cannot stand"
    r"|can not stand|don't (?:really |much |particularly )?like|do not like|don't do|do not do"
    r"|don't eat|do not eat|can't eat|cannot eat|don't drink|do not drink|can't have|can't do"
    r"|cannot do|can't handle|don't use|do not use|avoid|only want|'d rather|would rather"
    r"|'d prefer|would prefer|'m not (?:a |really a |a big |a huge )?fan of"
    r"|am not (?:a |a big )?fan of|'m a (?:big |huge )?fan of|am a (?:big |huge )?fan of"
    r"|'m (?:really |totally |not )?into|am (?:really |not )?into|'m obsessed with|care about"
    r"|value|'m (?:afraid|scared|terrified) of"
    r"|get (?:\w+ly )?(?:seasick|carsick|motion sick|migraines)"
    r"|'m (?:picky|fussy|particular) about|'m (?:not )?(?:big|keen) on|'m partial to"
    r"|can't abide|cannot abide|can't bear|can't be doing with|can't deal with"
    r"|\w+ (?:best|better) (?!friend)(?:with|in|when|by|at|on|if|after|before|early|late"
    r"|alone)\b|\w+ best$"
    r"|(?:always\s+)?get\s+(?:very\s+|really\s+|so\s+|quite\s+)?(?:nervous|anxious|carsick"
    r"|seasick|motion sick|migraines|cold|bored))"
)
_NOT_OBJECT = (
    r"(?!\s+(?:it|this|that|these|those|them|the idea|your)\b(?!\s+when))"
    r"(?!\s+when\s+(?:that|this|it|you)\b)"
)
_LIKES = lazy(
    rf"\b(?:i|we)(?:\s+|(?=['’])){_ADV}{_LIKE_VERB}\b{_NOT_OBJECT}"
    r"|^(?:really\s+|totally\s+)?(?:hate|love|prefer|dislike|adore|can't stand"
    rf"|not a (?:big |huge )?fan of|big fan of|huge fan of)\b{_NOT_OBJECT}",
    re.IGNORECASE,
)
_HABIT = lazy(
    r"\bi\s+can\s+(?:only\s+)?(?:do|spare|manage|give|commit)\s+(?:about\s+|around\s+|maybe\s+"
    r"|like\s+)?(?:\d+|one|two|three|a\s+few)\s+(?:hours?|hrs?|days?|evenings?|mins?|minutes)|"
    rf"\b(?:i|we)\s+{_ADV}(?:always|never|usually|mostly|normally|generally|typically|tend to"
    r"|only)\s+(?!(?:say|said|think|thought|forget|forgot|wanted|know|knew|get|got|learned|learnt"
    r"|started|found|realised|realized|noticed|tried|used|went|did|had|was)\b)\w+\b"
    r"(?!\s+(?:it|them|this|that)\b)"
    r"|\bour\s+(?:team|group|company|lab|office|family|house|household|firm|school)\s+"
    r"(?:always|usually|never|normally|only)\s+\w+"
    r"|\b(?:i|we)\s+(?!(?:have|had|am|was|will|'ll|need|needed|got|get|can|could)\b)\w+(?:\s+\w+){0,3}"
    r"\s+(?:on|at)\s+(?:the\s+)?(?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays"
    r"|saturdays|sundays)\b"
    r"|\b(?:i|we)\s+\w+(?:\s+\w+){0,3}\s+(?:every|each)\s+(?:day|morning|evening|night|week"
    r"|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b(?:i|we)\s+(?:grow|garden|bake|cook|knit|sew|paint|draw|run|jog|swim|cycle|hike|climb"
    r"|surf|ski|read|meditate|volunteer|commute|walk|drive|take|drink|eat)\s+(?!(?:it|this|that"
    r"|them|a\s+look|a\s+break|care|over)\b)\w+.*\b(?:every|each|daily|weekly|in\s+pots|at\s+home"
    r"|on\s+(?:weekends|weekdays)|(?:once|twice|three\s+times|\d+\s+times)\s+a\s+(?:day|week|month))\b"
    r"|\b(?:i|we)\s+(?:grow|garden|bake|knit|sew|paint|meditate|volunteer)\b"
    r"|\b(?:i'?m|i am)\s+trying\s+to\s+(?:cut\s+down|cut\s+out|eat\s+less|drink\s+less|avoid"
    r"|quit|stop)\b|\b(?:i'?m|i am)\s+(?:always|usually|normally|generally|mostly)\b"
    r"|^(?:every|each)\s+(?:day|morning|evening|night|week|weekend|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday)\s*,?\s*(?:i|we)\b"
    r"|^(?:on\s+)?(?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays"
    r"|sundays|most\s+days|in\s+the\s+mornings|in\s+the\s+evenings)\s*,?\s*(?:i|we)\b",
    re.IGNORECASE,
)
_DIET = lazy(
    r"\b(?:vegetarian|vegan|pescatarian|pescetarian|lactose[- ]intolerant|gluten[- ]free"
    r"|coeliac|celiac|kosher|halal|teetotal|allergic|allergy|intolerant|dairy[- ]free|keto|veggie"
    r"|diabetic|colou?rblind|deaf|dyslexic|autistic|adhd|epileptic|asthmatic|hard of hearing"
    r"|partially sighted|wheelchair|sober|on\s+an?\s+[\w'’-]+\s+diet|\w+[- ]sensitive)\b"
    r"|\bmakes?\s+me\s+(?:ill|sick|sleepy|bloated|anxious|nauseous)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = lazy(r"\b(?:i|i'm|im|i've|i'd|me|we|we're|we've|us)\b", re.IGNORECASE)
_FOR_ME = lazy(
    r"(?:^|,\s+)no\s+\w+(?:\s+\w+)?\s+(?:for\s+(?:me|us)|please|pls|plz|at\s+all|ever)\b"
    r"|^no\s+(?!(?:idea|worries|problem|clue|way|rush|need|thanks|pressure|offence|offense|biggie"
    r"|kidding|joke|luck|chance|doubt|matter|comment|questions|wonder|news|one)\b)[a-z][\w-]+s\W*$"
    r"|\b(?:tell|give)\s+(?:it\s+to\s+)?me\s+straight\b|\bdon't\s+dress\s+it\s+up\b"
    r"|\b(?:doesn't|don't|do not|does not|never)\s+(?:really\s+)?work\s+for\s+me\b"
    r"|\bmy\s+(?:main\s+|big\s+|biggest\s+)?(?:hobby|hobbies|passion|obsession)\s+(?:is|are)\b"
    r"|^(?:i'?m|i am|we'?re|we are)\s+(?:[\w.+#-]+\s+){1,2}only\b"
    r"|^(?:please\s+)?(?:don't|do not|never)\s+(?:suggest|recommend)\b"
    r"|^(?!(?:yes|yeah|no|ok|okay|sure|thanks|thank|that|this|it|one|the|a|an|just)\b)"
    r"(?![\w\s-]*\bhelp\b)(?:very\s+|more\s+|less\s+|only\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}\s+"
    r"(?:please|pls|plz)(?:\W*$|,)"
    r"|^(?:strict\s+|lifelong\s+)?(?:vegetarian|vegan|pescatarian|teetotal|coeliac|celiac)\b"
    r"(?:\s+here\b|\s*,|\s*$)"
    r"|\bfor me\b.*\b(?:matters|comes first|is key)|\bmatters\s+(?:most\s+)?to\s+me\b"
    r"|\bmatters most\b|\b(?:most\s+)?important\s+(?:thing\s+)?(?:to|for)\s+me\b"
    r"|\bmy (?:top |main |first )?priority\b|\bmy favou?rite\b|\bmy go-to\b"
    r"|\bi'?m (?:more of |much more of |not |not really |not much of )?an? (?:\w+\s+)?"
    r"(?:person|bird|owl|learner|fan)\b"
    r"|\b(?:works?|is|are)\s+(?:best|better)(?:\s+than\s+[\w\s]{1,20}?)?\s+for\s+(?:me|us)\b"
    r"|\b\d+\s*(?:mins?|minutes|hours?|hrs?|words|pages)\s+(?:max|maximum|tops)\b"
    r"|\b(?:isn't|is not)\s+(?:really\s+)?(?:my thing|for me)\b|\bdoesn't work for me\b"
    r"|\bbe\s+(?:blunt|direct|honest|brief|concise|gentle|straight)\s+with\s+me\b"
    r"|\bdon't\s+sugar-?coat\b"
    r"|\b(?:i|i'll|i'd|i\s+will|i\s+can|we|we'll)\s+(?:\w+\s+)?(?:eat|drink|watch|read|listen\s+to"
    r"|wear|try|do|play)\s+(?:anything|everything|whatever|most\s+things)\s+(?:except|but|apart\s+from"
    r"|other\s+than|bar)\b"
    r"|\bi\s+find\s+\w+(?:\s+\w+){0,3}\s+(?:annoying|boring|stressful|distracting|confusing"
    r"|overwhelming|relaxing|calming|helpful|easier|harder)\b"
    r"|\bi\s+(?:only\s+)?use\s+.+\bfor\s+(?:everything|all\s+my)\b"
    r"|^(?:please\s+)?(?:explain|write|keep|answer|describe|put)\s+(?:things|everything|stuff"
    r"|it all|your answers|answers|replies)\s+(?:\w+\s+)?(?:simply|simple|short|brief|briefly"
    r"|plainly|concise|concisely|in plain|step by step)\b",
    re.IGNORECASE,
)
_DURABLE = lazy(
    r"\b(?:always|never|from now on|going forward|going fwd|by default|in future|in the future"
    r"|for future|unless i say otherwise|now and later|for anything|for everything"
    r"|(?:anything|everything)\s+you\s+(?:\w+\s+)?(?:write|make|draft|send|give|do)"
    r"|(?:keep|do)\s+(?:it|them|things)\s+(?:\w+\s+)?like\s+(?:that|this)"
    r"|every time|every day|each time|next time|from here on|whenever)\b",
    re.IGNORECASE,
)
_STYLE = lazy(rf"\b(?i:{STYLE_NOUN})\b")
_NO_STYLE = lazy(rf"^(?i:no|never|without)\s+(?:(?i:more|any)\s+)?(?i:{STYLE_NOUN})\b")
_STYLE_ASK = lazy(
    r"^(?:please|pls|plz|kindly|always|never|keep|use|write|stick to|format|answer|reply|spell"
    r"|give me|show me|send me"
    r"|can you|could you|would you|don't|do not|avoid|stop|skip)\b|\b(?:please|pls|plz)\b"
    r"|\b(?:i|we)(?:\s+|(?=['’]))(?:want|need|'d like|would like|expect)\b(?!\s+(?:to|help)\b)"
    r"|^(?:me|for me|personally|me personally)\b.*\b(?:give|send|show|tell|skip|keep|write)\b",
    re.IGNORECASE,
)
# "Keep it under 60 words", "can you summarise it in 3 bullets?": an instruction for the
# draft at hand, not a lasting preference (unless it says "always", "from now on", ...).
_ONE_OFF = lazy(
    r"^(?:(?:please|pls|plz|can\s+you|could\s+you|would\s+you|just|and|also|then)\s+)*"
    r"(?:keep|make|write|put|summari[sz]e|turn|format|rewrite|do|give|send|cut|shorten|translate"
    r"|reword|change|trim|end|start|sign|finish|lay\s+out|present|list)\s+(?:it|this|that|them"
    r"|these|those|the\s+(?:draft|email|bio|letter|post|text|summary|reply|message|intro|list"
    r"|doc|document|version|answer|paragraph|one|slide|slides|speech|note|card|toast|caption))\b",
    re.IGNORECASE,
)
# "Our director wants all client emails in French": a standing rule for the user's work.
_STANDING = lazy(
    r"\b(?:wants|needs|expects|requires|insists\s+on|likes|prefers|asks\s+for)\s+(?:all|every"
    r"|everything|each|any)\b",
    re.IGNORECASE,
)
_WH = lazy(r"^(?:what|when|where|why|how|who|which)\b", re.IGNORECASE)


# "Going forward: just the diff", "For future: ...": a standing instruction follows.
_DURABLE_LEAD = lazy(
    r"^(?:going\s+(?:forward|fwd)|from\s+now\s+on|for\s+(?:the\s+)?future|in\s+future"
    r"|standing\s+(?:rule|pref|prefs|preference)s?)\s*[:,—–-]\s*\S",
    re.IGNORECASE,
)
_THIS_TIME = lazy(
    r"\b(?:this\s+time|for\s+now|just\s+this\s+once|for\s+this\s+one)\b"
    r"|^(?:i\s+)?(?:never|always)\s+(?:\w+ed|been|had|did|was|went|got)\b",
    re.IGNORECASE,
)
# "Metric units only", "friendly but short answers": a style with no verb.
_STYLE_ONLY = lazy(
    r"\b(?i:only)\W*$|^(?:[\w-]+,?\s+(?:(?i:but|and)\s+)?){1,3}(?i:answers|replies|responses"
    r"|explanations|summaries|sentences|paragraphs)\W*$"
)


def is_preference(core: str) -> bool:
    """A stable like, dislike, habit, diet or way the user wants answers written."""
    if _THIS_TIME.search(core):
        return False
    if _LIKES.search(core) or _HABIT.search(core) or _FOR_ME.search(core):
        return True
    if _DURABLE_LEAD.match(core):
        return True
    if _STYLE.search(core) and _STYLE_ONLY.search(core):
        return True
    if _DIET.search(core) and _FIRST_PERSON.search(core):
        return True
    if _NO_STYLE.match(core):
        return True
    durable = bool(_DURABLE.search(core))
    if _ONE_OFF.match(core) and not durable:
        return False
    style = bool(_STYLE.search(core))
    if style and _STANDING.search(core):
        return True
    return ((style or durable) and bool(_STYLE_ASK.search(core))) or (style and durable)


def is_style_request(clause: str) -> bool:
    """ "Could you write in bigger letters?": a question that states a working preference."""
    if _THIS_TIME.search(clause):
        return False
    if _ONE_OFF.match(clause) and not _DURABLE.search(clause):
        return False
    return bool(_STYLE.search(clause) and _STYLE_ASK.search(clause) and not _WH.match(clause))
