"""Closed word classes and regex building blocks for offline capture.

General English only: kinship and social relations, common job titles, calendar words, the
nouns that name a piece of work or an organisation, style nouns for how answers are written.
Nothing here names a particular person, place, company or product; the capture_* modules
combine these into their clause rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from vault_brain.domain.text import wordset


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of the words, longest first, spaces matching any whitespace."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


# Upper-case letters of the Latin scripts (names such as Théo, Łukasz, Øyvind).
UPPER = "".join(ch for ch in map(chr, range(0x41, 0x250)) if ch.isupper())
_LETTER = r"[^\W\d_]"
# One name word: capitalised, may carry hyphenated parts (Joon-ho) or an apostrophe before a
# capital (O'Brien) but not a possessive 's.
NAME_WORD = rf"[{UPPER}]{_LETTER}*(?:-{_LETTER}+|['’][{UPPER}]{_LETTER}*)*"
# Up to three name words, lower-case particles allowed inside ("Pain de Jeanne").
PARTICLE = (
    r"(?:de|du|da|del|della|di|van|von|vom|der|den|le|la|bin|al|el|dos|das|am|im|zum|zur|sur|of|for"
    r"|on|the|&)"
)
NAME_SEQ = rf"(?:The\s+(?={NAME_WORD}))?{NAME_WORD}(?:\s+(?:{PARTICLE}\s+)?{NAME_WORD}){{0,2}}"
# A title before a name (never part of the name a note is titled with).
TITLE = rf"(?:(?i:mr|mrs|ms|miss|mx|dr|prof|professor|sir|dame)\.?\s+(?=[{UPPER}]))"

# Capitalised words that are not names: function words, interjections, calendar words,
# sentence adverbs.
NOT_NAMES = wordset(
    """I I'm I've I'd I'll Im A An The This That These Those It Its It's He She They We You Me
    Him Her Us Them My Our Your Their His Hers Mine Ours What When Where Why How Who Which
    Whose If And But Or So Also Then Yes No Not Ok Okay Oh Hi Hey Hello Dear Thanks Thank
    Please Pls Sorry Sure Maybe Just Only Still Well Now Here There Everyone Someone Nobody
    All Both Each Every Some Any Many Most One Two Three Let Let's Lets Do Did Don't Is Are
    Was Were Be Been Has Have Had Can Could Would Should Will Shall May Might Must Got Get
    Good Great Perfect Nice Cool Sound Cheers Congratulations Btw Fyi Fwiw Lol Ugh Hmm Nah
    Yeah Yep Sunday Monday Tuesday Wednesday Thursday Friday Saturday January February March
    April June July August September October November December Today Tomorrow Tonight
    Morning Evening Afternoon Night Week Month Year Easter Christmas Mum Mom Dad User Am
    Decision Decided Agreed Context Update Note Option Day Days Anyway Re Mr Mrs Ms Dr Prof
    Professor Sir Dame Miss Mx Internally Basically Actually Honestly Next Last First New Old
    Originally Currently Recently Usually Normally Apparently Luckily Sadly Hopefully Finally
    Obviously Seriously Literally Definitely Probably Eventually Unfortunately Thankfully
    Big Little Small Team Project Release Deadline Plan Formatting Clients Sundays Mondays
    Tuesdays Wednesdays Thursdays Fridays Saturdays Weekends"""
)

KINSHIP = wordset(
    """wife husband partner fiancé fiancée fiance fiancee spouse girlfriend boyfriend gf bf
    hubby sis bro bestie bff mother father mom mum dad mama papa parent stepmother stepfather
    stepmom stepmum stepdad son daughter child kid baby stepson stepdaughter brother sister
    sibling twin grandson granddaughter grandchild grandkid grandmother grandfather grandma
    grandpa gran granny grandad nan nana aunt auntie uncle cousin niece nephew godson
    goddaughter godmother godfather brother-in-law sister-in-law mother-in-law
    father-in-law son-in-law daughter-in-law"""
)
SOCIAL = wordset(
    """friend mate buddy pal neighbour neighbor roommate flatmate housemate classmate ex
    bridesmaid dog cat puppy kitten pet horse"""
)
WORK_RELATIONS = wordset(
    """boss manager supervisor co-supervisor advisor adviser mentor mentee colleague coworker
    co-worker teammate cofounder co-founder founder partner co-pi pi postdoc student intern
    assistant hire lead head director client customer contact landlord landlady tenant agent
    editor publisher maintainer co-maintainer reviewer collaborator co-author coauthor
    sponsor investor owner chair deputy principal hod"""
)
JOBS = wordset(
    """developer dev engineer programmer coder designer architect analyst scientist
    researcher manager director lead head founder cofounder co-founder ceo cto cfo coo cmo
    cio vp president consultant contractor freelancer nurse doctor physician surgeon gp
    dentist pharmacist paramedic midwife physio physiotherapist therapist psychologist
    psychiatrist counsellor counselor radiologist vet veterinarian teacher tutor lecturer
    professor instructor coach trainer student phd postdoc undergrad undergraduate librarian
    lawyer attorney solicitor barrister paralegal judge accountant bookkeeper auditor banker
    clerk cashier baker chef cook waiter waitress barista bartender farmer gardener builder
    carpenter plumber electrician mechanic technician driver pilot sysadmin administrator
    admin tester illustrator artist painter photographer writer author journalist editor
    translator musician guitarist drummer bassist singer vocalist pianist violinist actor
    dancer marketer recruiter secretary assistant receptionist intern apprentice officer
    firefighter biologist chemist physicist mathematician economist statistician geologist
    ecologist linguist historian archaeologist astronomer maintainer entrepreneur retiree
    homemaker carer caregiver nanny planner coordinator specialist sre devops surveyor
    inspector operator welder tailor florist butcher hairdresser barber stylist cleaner
    courier dispatcher trader broker realtor principal headteacher headmaster headmistress
    dean chaplain priest pastor rabbi imam soldier sailor hygienist locksmith roofer
    decorator caretaker janitor custodian guard fishmonger grocer shopkeeper salesman
    saleswoman rep representative executive actuary underwriter strategist copywriter
    blogger youtuber streamer podcaster producer filmmaker animator interpreter senco
    anaesthetist anesthesiologist radiographer sonographer optician optometrist
    orthodontist emt rn worker chiropractor osteopath dietitian dietician nutritionist
    lifeguard athlete footballer player referee composer dj poet novelist archivist curator
    reporter detective trucker postman postwoman miner forester beekeeper fisherman joiner
    bricklayer tiler plasterer landscaper politician councillor diplomat pupil trainee
    volunteer fellow candidate supervisor seamstress beautician housekeeper childminder
    babysitter vicar minister guide attendant associate advisor adviser operative sommelier
    brewer winemaker server hotelier teller dba mum mom dad stay-at-home treasurer trustee
    governor steward organiser organizer captain member conductor choirmaster bandleader
    organist mentor examiner machinist junior sophomore freshman fresher servant"""
)
RELATION = alternation(KINSHIP | SOCIAL | WORK_RELATIONS | JOBS | {"best man"})
JOB = alternation(JOBS)
INSTRUMENT = alternation(
    wordset(
        """guitar bass drums piano keys keyboard keyboards violin viola cello sax saxophone
        trumpet trombone flute clarinet harp ukulele banjo mandolin synth vocals"""
    )
)
# Fields of work: "I'm in HR", "I work in marketing".
DEPARTMENT = (
    r"(?:team|department|dept|accounting|accounts|finance|hr|legal|marketing|sales|engineering"
    r"|ops|operations|support|design|product|research|security|infra|it|payroll|billing|admin"
    r"|procurement|facilities|customer\s+service|education|healthcare|retail|hospitality"
    r"|construction|tech|law|insurance|banking|publishing|logistics|pr|comms|recruitment"
    r"|consulting|real\s+estate|property|nursing|medicine|pharma|biotech|fintech|media"
    r"|journalism|government|the\s+civil\s+service|academia|the\s+nhs)\b"
)
# Nationalities: "I'm Brazilian" says where the user is from, not their name.
DEMONYM = alternation(
    wordset(
        """American Argentinian Australian Austrian Bangladeshi Belgian Bolivian Brazilian
        British Bulgarian Cambodian Canadian Chilean Chinese Colombian Croatian Cuban Czech
        Danish Dutch Ecuadorian Egyptian English Estonian Ethiopian Filipino Finnish French
        German Ghanaian Greek Guatemalan Hungarian Icelandic Indian Indonesian Iranian Iraqi
        Irish Israeli Italian Jamaican Japanese Jordanian Kenyan Korean Latvian Lebanese
        Lithuanian Malaysian Maltese Mexican Moroccan Nepali Nigerian Norwegian Pakistani
        Palestinian Peruvian Polish Portuguese Romanian Russian Scottish Senegalese Serbian
        Singaporean Slovak Slovenian Somali Spanish Sudanese Swedish Swiss Syrian Taiwanese
        Thai Tunisian Turkish Ugandan Ukrainian Uruguayan Venezuelan Vietnamese Welsh Zambian
        Zimbabwean"""
    )
)
# A person named without a relation: "a guy called X".
PERSON_NOUN = alternation(wordset("guy man woman lady girl boy bloke chap person someone fellow"))

# Nouns for a piece of work with a name of its own: "a game called X", "the X service".
WORK_NOUN = alternation(
    wordset(
        """project service app application system platform tool library crate package module
        plugin extension api site website repo repository pipeline game book novel thesis
        dissertation album ep podcast newsletter blog channel show film documentary campaign
        product initiative programme program study proposal course framework engine bot
        dashboard portal database prototype mvp zine comic series migration rewrite redesign
        rollout upgrade refactor overhaul integration experiment survey report audit cli sdk
        fundraiser play musical production rebrand pilot docs documentation handbook guide
        wiki manual curriculum workshop"""
    )
)
# Nouns for an organisation the user belongs to or runs: "a small bakery called X".
ORG_NOUN = alternation(
    wordset(
        """company startup start-up firm agency bakery shop store restaurant cafe café bar pub
        clinic hospital practice school university college band choir orchestra team lab
        studio charity business chain brand label club nonprofit non-profit organisation
        organization cooperative co-op consultancy vineyard winery brewery distillery farm
        smallholding orchard hotel guesthouse b&b hostel salon workshop garage nursery gallery
        bookshop bookstore deli kitchen bistro food-truck stall takeaway surgery pharmacy
        gym dojo academy kindergarten daycare press magazine newspaper publisher fintech insurer
        bank nonprofit florist"""
    )
)
# What answers, documents and examples look like: the objects of a working preference.
STYLE_NOUN = alternation(
    wordset(
        """english spelling format formatting tone style language letters font units metric
        imperial markdown bullet bullets table tables example examples answer answers reply
        replies response responses sentence sentences paragraph paragraphs typing comments
        jargon emoji emojis exclamation capitals lowercase uppercase date dates currency
        decimals comma headings code person voice summary summaries explanation explanations
        colours colors diagrams charts images pictures visuals page pages photo photos length
        numbered step-by-step equations equation formulas maths latex snippets strikethrough
        wording font"""
    )
    | {"big type", "large type", "large print", "big print", "font size"}
)

_FULL_MONTHS = wordset(
    "january february april june july august september october november december"
)
_MONTH = alternation(
    _FULL_MONTHS | wordset("jan feb apr jun jul aug sep sept oct nov dec may march")
)
_FULL_MONTH = alternation(_FULL_MONTHS)
_WEEKDAY = alternation(wordset("monday tuesday wednesday thursday friday saturday sunday"))
# A month or a weekday by name ("in June", "in Mar", "on Monday"), for `(?i:...)`.
CALENDAR_WORD = rf"(?:{_MONTH}|{_WEEKDAY})s?\b"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_NUMBER = alternation(wordset("a an one two three four five six seven eight nine ten"))
_SEASON = alternation(wordset("spring summer autumn fall winter"))
_HOLIDAY = alternation(
    wordset("Easter Christmas Xmas Thanksgiving Halloween Hanukkah Diwali Eid Ramadan Passover")
    | {"New Year"}
)
# A calendar reference: a day and month, a month, a weekday, "the 9th", an ISO date, a year,
# "next week", "in two weeks", a holiday, "in the spring".
DATE = re.compile(
    rf"\b(?i:early|mid|late)-?\s*(?i:{_MONTH})\b"
    r"|\b(?i:on|by|before|after|until|till|from|due)\s+\d{1,2}/\d{1,2}(?![/\d])"
    rf"|\b{_DAY}(?:\s+of)?\s+(?i:{_MONTH})\b|\b(?i:{_MONTH})\s+{_DAY}\b"
    rf"|\b(?:May|March)\b|\b(?i:{_FULL_MONTH})\b|\b(?i:{_WEEKDAY})s?\b"
    r"|\b(?i:the)\s+\d{1,2}(?:st|nd|rd|th)\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b(?:19|20)\d{2}\b"
    rf"|\b(?i:next|this coming)\s+(?i:week|month|year|weekend|{_SEASON}|{_WEEKDAY}|{_MONTH})\b"
    rf"|\b(?i:in)\s+(?i:{_NUMBER}|\d+)\s+(?i:days?|weeks?|months?)\b"
    r"|\b(?i:tomorrow|this weekend|in a fortnight|later this (?:week|month|year)|(?:at|on) the"
    r" weekend|in the new year|in a (?:few|couple of) (?:days|weeks|months))\b"
    rf"|\b(?i:this|next)\s+(?i:{_SEASON})\b"
    r"|\b(?i:end|start|beginning|middle)\s+of\s+(?i:the\s+)?(?i:month|week|year|term|semester)\b"
    rf"|\b(?:{_HOLIDAY})\b|\b(?i:in|by|over)\s+the\s+(?i:{_SEASON})\b"
)
# A deadline: something due by a date.
DEADLINE = re.compile(rf"\b(?i:by|before|due)\s+(?:the\s+)?(?=\S)(?:{DATE.pattern})")
