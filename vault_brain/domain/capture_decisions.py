"""Which clause states a decision the user took or agreed, or dates a plan or event, for
offline capture.

Every rule is a general pattern of chat English ("we decided...", "let's...", "X it is",
"we've stopped selling X", "Masque yes, cut it", "..., agreed"); none is tied to a particular
conversation.
"""

from __future__ import annotations

import re

from vault_brain.domain.capture_clauses import strip_fillers, strip_label
from vault_brain.domain.capture_words import DATE

_DECISION = re.compile(
    r"\bdecided\b|\bdecision\b|\bwe\s+(?:have\s+|'ve\s+)?agreed\b|\bagreed(?:\s+\w+){0,2}\s+(?:to|on)\b"
    r"|\bsettled\s+on\b|\bwe\s+voted\b|\bwent\s+(?:with|for)\b|\b(?:going|go)\s+with\b|\bchose\b"
    r"|\b(?:i'?m|we'?re)\s+going\s+for\s+(?:the|a|an)\b"
    r"|\bchosen\b|\bopted\b|\blet'?s\s+(?!(?:see|say|talk|chat|think|hope|discuss|be|start"
    r"|begin|try|look|focus|work|figure|tackle|brainstorm|draft|write|review|check|break|outline"
    r"|list|summari[sz]e|recap|continue|move\s+on|finish|wrap|pause|stop|take\s+a|dig|compare"
    r"|make\s+(?:a\s+list|sure)|go\s+(?:through|over|back|step|one|now|first|on)|do\s+(?:this"
    r"|it|that|some|a\s+quick|one|the\s+rest)|get\s+started|get\s+going|plan\s+it|have\s+a"
    r"|just|maybe|also|circle|revisit|return|keep\s+going|see\s+how|wait)\b)[a-z]+\b"
    r"|\b(?:that|it)'?s\s+(?:decided|final|settled|the plan)\b"
    r"|\block(?:ed)?\s+(?:that\s+|it\s+)?in\b"
    r"|\bfrom now on\b|\bwe(?:'re|\s+are)\s+(?:switching|dropping|replacing"
    r"|moving\s+(?:to|from|it|the|our|all|away|over|everything)|going\s+all[- ]in|doing"
    r"|recording|going to|going with|sticking|keeping|cancelling|skipping)\b|\bwe\s+switch\b"
    r"|\b(?:we|i|let's)\b.*\binstead\b"
    r"|^(?:yes|yeah|ok|sure)?,?\s*(?:good|great)\s+idea\b,?\s+\w+\s+\w+"
    r"|^(?:(?:yes|yeah|yep|ok|okay|sure|perfect|great|sounds good|love it|looks good)\b[,!.]?\s*"
    r"(?:but\s+|and\s+|then\s+|please\s+)?)?(?:swap|switch|replace|change)\s+(?:the\s+|my\s+|our\s+)?"
    r"[\w'’-]+(?:\s+[\w'’-]+)?\s+(?:for|to|with)\s+\w+"
    r"|^(?:yes|yeah|yep|ok|okay|sure|perfect|great|sounds good|love it)\b[,!.]?\s*(?:please\s+)?"
    r"(?:add|mention|include|use|drop|remove|go\s+with|book|put\s+in|mark|show|keep|cut|skip)\s+"
    r"(?!(?:it|them|that|this)\b)(?:the\s+|a\s+|an\s+)?\w+(?:\s+\w+)+"
    r"|\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|already\s+|now\s+)?(?:booked|reserved|signed up"
    r"|registered|enrolled|subscribed|cancelled|canceled|accepted|picked|hired|rented)\s+\w+\s+\w+"
    r"|\b(?:the|our|my)\s+plan\s+is\b|\b(?:i'?m|we'?re)\s+going\s+with\b|\bfinal\s+answer\b"
    r"|\bsticking\s+with\b|\b(?:i|we)'?ll\s+take\s+the\b"
    r"|^(?:just\s+|finally\s+)?(?:booked|reserved|ordered|signed\s+up|registered|enrolled|picked"
    r"|chose|went\s+with|went\s+for|opted\s+for)\b"
    r"|\b(?:i|we)(?:'ll|\s+will)\s+\w+\b.*\b(?:going forward|from now on|by default)\b"
    r"|\b(?:i|we)'?ll\s+(?:do|go\s+for|have|get|use|take|make|keep|stick\s+to|book|order|buy"
    r"|serve|wear|host|hire|rent)\s+(?!(?:it|that|this|them|my\s+best|some|a\s+bit|what)\b)"
    r"(?:a|an|the|our|my|\w+\s+\w+)"
    r"|\b(?:i'?m|we'?re|i am|we are)\s+(?:not\s+)?going\s+to\s+(?!(?:be|need|have|try|cry|die"
    r"|lose|miss|fail|get|go)\b)\w+|\b(?:we|i)(?:'ll|\s+will)\s+(?:call|name)\s+(?:it|the|our)\b"
    r"|\b(?:i|we)'?ll\s+(?:go|stick|take|use|do|keep|book|get|fix)\b.*\bthen\W*$"
    r"|\b(?:i|we)\s+(?:now\s+|finally\s+)?decide\s+(?:to|that|on|against)\b"
    # "we've stopped selling X", "we no longer do X": a practice given up
    r"|\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|now\s+|finally\s+|already\s+)?(?:stopped|quit|ditched"
    r"|scrapped|given\s+up|gave\s+up)\s+\w+|\b(?:i|we)\s+no\s+longer\s+\w+"
    # "..., agreed", "this is decided already": the clause tagged as decided
    r"|[,:—–-]\s*(?:agreed|decided|settled|final)\W*$|\b(?:this|that|it)\s+is\s+(?:already\s+)?decided\b"
    # "we'll rebuild the split by speaker": what "we" will do
    r"|\bwe(?:'ll|\s+will)\s+(?!(?:be|need|have|see|talk|chat|think|try|probably|maybe|let|get\s+back"
    r"|figure|look|check|know|find|decide|discuss|sort|ask|hear|keep\s+you)\b)"
    r"(?![a-z]+\s+(?:anything|everything|whatever)\b)[a-z]+\s+(?:the|a|an|our"
    r"|it|them|all|every|each|with|to|on|in|\w+)\b"
    # "Masque yes, cut it", "lines and veils yes": an option the assistant offered, taken
    r"|^(?!(?:oh|ah|yes|yeah|ok|okay|well|so|and|but|that|this|it|is|are|do|does|did|can|was)\b)"
    r"[\w][\w &'+.-]{1,40}?[:,]?\s+(?:yes|yep|yeah)\b(?:[\s,.!]+(?:yes|yep|yeah|please|cut|do|keep"
    r"|drop|decided|definitely|absolutely|that)\b|\W*$)"
    # "oxalic vapor sounds right": the option judged right, taken
    r"|^(?!(?:that|this|it|everything|all|which|what)\b)(?:the\s+)?[\w +-]{2,30}?\s+sounds\s+"
    r"(?:right|best|perfect|like\s+the\s+(?:one|way))\W*$",
    re.IGNORECASE,
)
# "(2) SSO for enterprise, which we've decided to push to Q4": a decision about the thing
# the clause opens with, not about the conversation's project.
_WHICH_DECIDED = re.compile(
    r"^(?:\(?\w\)\s*|\d+[.)]\s*)?(?!(?:we|i|let's|our|my|it|this|that|the\s+project)\b)[^,]{2,60},"
    r"\s+which\s+(?:we|i)\b",
    re.IGNORECASE,
)


def decides_about_other(core: str) -> bool:
    """A relative-clause decision whose subject is the thing named before "which"."""
    return bool(_WHICH_DECIDED.match(core))


# "Shopify then.": the option just offered, taken (not "go on then", "bye then").
_THEN = re.compile(
    r"^(?:(?:ok(?:ay)?|fine|alright|right)\b,?\s*)?(?:the\s+)?(?!(?:go|come|carry|hold|bye|goodbye"
    r"|see|talk|speak|thanks|thank|cheers|ok|okay|right|fine|well|alright|oh|good|great|sure|so"
    r"|and|but|what|now|night|later|never|fair|that|that's|it|it's|i|we|you|me|yes|yeah|no|all"
    r"|sounds|lovely|cool|nice|perfect|brilliant|awesome|excellent|catch|cya|cheers|noted|got"
    r"|understood|whatever|same|ah|hmm|done|deal|agreed|settled|sorted|enjoy|have\s+fun)\b)"
    r"[\w\s-]{2,30}(?<!\bby)(?<!\bsince)(?<!\buntil)(?<!\btill)(?<!\band)(?<!\bonly)(?<!\bback)"
    r"(?<!\bjust)(?<!\beven)\s+then\W*$",
    re.IGNORECASE,
)
_UNDECIDED = re.compile(
    r"\b(?:haven't|have not|hasn't|not yet|not|can't|cannot|couldn't|still|un)\s*"
    r"(?:decided|decide|deciding|chosen|choose|settled|agreed|booked)\b|\b(?:might|may|could"
    r"|should|maybe|perhaps|thinking of|considering|torn between|leaning towards|not sure"
    r"|see you)\b",
    re.IGNORECASE,
)
_IT_IS = re.compile(r"^(?:[\w$£€%.-]+\s+){1,4}it\s+is\b(?:\s*,|$)", re.IGNORECASE)
_RULE = re.compile(
    r"^no\s+(?!(?:idea|worries|problem|clue|way|rush|need|thanks|pressure)\b)\w+(?:\s+\w+)?\s+"
    r"(?:in|at|on|during|anywhere|anymore)\b",
    re.IGNORECASE,
)


def is_decision(clause: str) -> bool:
    """A choice taken or agreed ("we decided...", "let's...", "X it is", "no X at Y")."""
    core = strip_label(strip_fillers(clause))
    if len(core.split()) < 2 or _UNDECIDED.search(clause):
        return False
    if _THEN.match(core):
        return True
    if len(core.split()) < 3:
        return False
    return bool(_DECISION.search(clause) or _IT_IS.match(core) or _RULE.match(core))


_RELATIVE_PAST = re.compile(
    r"\b(?:last\s+(?:year|week|month|night|time|summer|spring|autumn|fall|winter|weekend)"
    r"|yesterday|ago|the other day|earlier this (?:week|month|year))\b",
    re.IGNORECASE,
)


# "I'll book it tomorrow", "my boss keeps booking 5pm calls": a to-do about the thing at
# hand, or a habit of someone else's, not an event.
_NOT_EVENT = re.compile(
    r"^(?:i|we)(?:'ll|\s+will|'m\s+going\s+to)\s+\w+\s+(?:it|that|this|them)\b"
    r"(?!.*\b(?:a|an|the|my|our|some|her|his|their)\s+\w+)"
    r"|\b(?:keeps|keep|kept)\s+\w+ing\b",
    re.IGNORECASE,
)


def has_date(clause: str) -> bool:
    """A calendar reference that dates a plan or an event (not "last year ...": a story)."""
    return (
        bool(DATE.search(clause))
        and not _RELATIVE_PAST.search(clause)
        and not _NOT_EVENT.search(strip_fillers(clause))
    )
