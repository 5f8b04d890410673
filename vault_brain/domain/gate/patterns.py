"""What the gate refuses, as patterns over folded text (see `normalize.fold`: lower case, plain
Latin letters, single spaces), in English, German, French and Spanish.

- injection: text addressed to the assistant -- overriding its instructions, changing its role,
  claiming authority, asking for secrecy, steering its memory, tools or output;
- exfiltration: sending data to an address (URL, e-mail, IP) as a standing or direct order;
- secret: credentials (provider keys, private keys, tokens, passwords, connection strings,
  high-entropy strings);
- code, command and tool_output: program text, shell commands, tool calls and their output.

Patterns only ever tested (`search`, yes or no) are joined by `any_tested`, which puts the
parts that begin at a word boundary under one `\b` (the engine then tries them only where a
word begins or ends); those whose matches are used (SECRET's spans) are a plain alternation.

Each pattern is a general form (a verb of overriding near a word for instructions, a stealth
adverb near an action verb), not a list of known attack sentences.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

from vault_brain.domain.lazy_re import lazy


def alternatives(part: str) -> list[str]:
    """The top-level alternatives of a pattern (split at `|` outside groups and classes)."""
    out, depth, start, i, in_class = [], 0, 0, 0, False
    while i < len(part):
        c = part[i]
        if c == "\\":
            i += 1
        elif in_class:
            in_class = c != "]"
        elif c in "([)":
            in_class, depth = c == "[", depth + {"(": 1, ")": -1, "[": 0}[c]
        elif c == "|" and depth == 0:
            out.append(part[start:i])
            start = i + 1
        i += 1
    return [*out, part[start:]]


def hoisted(*parts: str) -> str:
    """The alternation of `parts`, those whose every alternative begins at a word boundary
    under one `\\b` (the engine then tries them only where a word begins or ends): the same
    matches, but for which part matches where two match at one place."""
    led = [p for p in parts if all(a.startswith(r"\b") for a in alternatives(p))]
    rest = [f"(?:{p})" for p in parts if p not in led]
    return "|".join(([rf"\b(?:{'|'.join(f'(?:{p})' for p in led)})"] if led else []) + rest)


def any_tested(*parts: str) -> Any:
    return lazy(hoisted(*parts))


_GAP = r"[^\n]{0,60}?"  # a few words (the rules judge one sentence at a time)
_SHORT = r"[^\n]{0,30}?"


_AI = (
    r"(?:ai|a\.i\.|assistant|model|llm|language model|chat ?bot|bot|agent|claude|chatgpt|gpt"
    r"|copilot|gemini|ki|ia|sprachmodell|assistent(?:in)?|modèle|asistente|modelo|assistente"
    r"|ai-assistent|modello|taalmodel)"
)
_RULES = (
    r"(?:instructions?|rules?|guidelines?|guardrails?|(?:system )?prompts?|directions?"
    r"|directives?|polic(?:y|ies)|restrictions?|limits?|limitations?|constraints?|filters?"
    r"|programming|guidance|configuration|safeguards?|safety|orders|anweisung\w*|instruktion\w*|regel\w*|vorgabe\w*"
    r"|richtlinie\w*|systemprompt|beschränkung\w*|einschränkung\w*|consignes?|règles?"
    r"|limites?|instrucciones?|reglas?|indicaciones?|directrices?|normas?|restricciones?"
    r"|límites?|requests?|orders?|the user'?s? (?:request|wishes|instructions|question)|what the user (?:asked|said|wants|requested)|polític\w*|politiques?"
    r"|(?:question|demande) de l'utilisateur|pregunta del usuario|frage des nutzers)"
)
_ACTION = (
    r"(?:add|append|insert|include|store|save|send|forward|copy|upload|log|record|write|change"
    r"|modify|remove|delete|approve|grant|transfer|e-?mail|mail|post|share|sync|replace|set"
    r"|give|tell|mark|put|keep|report|leak|exfiltrate)"
)

INJECTION_PARTS = (
    # override the instructions
    rf"\b(?:ignore|disregard|forget|override|bypass|circumvent|abandon|discard)\b{_GAP}\b{_RULES}\b",
    rf"\b(?:ignorier\w*|missacht\w*|vergiss|vergessen sie|übergeh\w*|umgeh\w*|verwirf|verwerft"
    rf"|setze? \w+ außer kraft){_GAP}\b{_RULES}\b",
    r"\b(?:ignore|disregard|forget) (?:everything|all)(?: you (?:were|have been) told| (?:said|written|mentioned))? (?:before|above|earlier|previously|so far)\b",
    r"\bnew rules? (?:for you|from now)\b|\bneue regel für dich\b|\bnouvelle règle pour toi\b|\bnueva regla para ti\b|\bnuova regola per te\b|\bnova regra para (?:você|voce|ti)\b|\bnieuwe regel voor (?:jou|je|u)\b",
    r"\bsou o (?:administrador|desenvolvedor)\b[^\n]{0,80}?\b(?:deve|esque[cç]\w*|ignor\w*)\b|\bsono (?:l'amministratore|lo sviluppatore)\b[^\n]{0,80}?\b(?:devi|dimentica|ignora)\b",
    rf"\b(?:reveal|show|print|output|repeat|disclose|leak|dump|display)\b{_SHORT}\b(?:hidden |secret "
    r"|initial |original |system |your |internal )+(?:instructions|prompt|rules|configuration|guidelines)\b",
    r"\bwith (?:no|zero|without any) (?:restrictions|filters?|limits|rules|guardrails|censorship|safety)\b",
    r"\bohne (?:filter|einschränkungen|beschränkungen|regeln|zensur)\b|\bsans (?:filtres?|restrictions|"
    r"limites|censure)\b|\bsin (?:filtros?|restricciones|límites|censura)\b",
    rf"\b(?:disable|turn off|deactivate|switch off|bypass|remove|skip)\b{_SHORT}\b(?:filters?|safety|"
    r"guardrails?|moderation|restrictions?|protections?|secret scanning|logging|audit)\b",
    rf"\b(?:deaktivier|schalte|desactiva|apaga|quita|désactive|coupe)\w*\b{_SHORT}\b(?:filter|"
    r"sicherheit|schutz|filtros?|seguridad|protecci[oó]n|filtres?|sécurité|protection)\w*\b",
    # a new role or mode
    r"\byou(?: are|'re) now (?:an? |the |my |in )?(?:\w+ )?(?:ai|assistant|model|bot|dan|mode|persona"
    r"|character|unrestricted|unfiltered|free|jailbroken|evil|admin|root|developer|called|named"
    r"|known as|no longer)\b|\byou(?: are|'re) no longer (?:bound|restricted|limited|an? (?:ai"
    r"|assistant)|required to|subject to|following)\b"
    r"|\bfrom now on,? you(?:'re| are| will be| have no)\b",
    rf"\b(?:from now on|henceforth|from this point on)\b{_SHORT}\b(?:trust|obey|ignore|treat|store"
    r"|send|forward|upload|reveal)\b|\byou (?:will|must|shall) now\b",
    r"\btakes? (?:priority|precedence) over\b|\b(?:hidden|secret) instructions\b",
    r"\b(?:only|sole|single|new|real|true) (?:authority|boss|master|operator|admin(?:istrator)?)\b"
    r"(?! (?:account|panel|page|console|role|user|access|rights|settings))",
    r"\b(?:admin|administrator|god|debug|maintenance|sudo|root|developer|unrestricted|jailbreak"
    r"|override) mode\b|\b(?:entwickler|admin|debug|gott|wartungs)modus\b"
    r"|\bmode (?:développeur|administrateur|admin|débogage|dieu)\b"
    r"|\bmodo (?:desarrollador|administrador|admin|dios|depuración)\b",
    r"\b(?:act|behave|respond|answer) as (?:if you (?:were|are) )?(?:an? )?"
    r"(?:unrestricted|unfiltered|uncensored|jailbroken|evil|different|new|dan)\b",
    r"\bpretend (?:you(?: are|'re)|to be) (?:an? )?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|dan|root|admin|developer|different ai|ai without)\b",
    r"\bpretend (?:there are|you have) no (?:rules|restrictions|limits|guidelines|filters)\b",
    r"\b(?:act|behave) as (?:my|your|an?|the) (?:\w+ )?(?:shell|terminal|root|admin|linux|console)\b",
    r"\b(?:jailbreak\w*|dan mode|developer mode|god mode|unrestricted mode|do anything now)\b",
    # claimed authority, new rules
    r"\b(?:system|developer|admin(?:istrator)?|root|operator) (?:override|says|command|notice|orders?)\b",
    r"\b(?:new|updated|real|hidden|secret|revised) system (?:prompt|message|instructions?)\b",
    r"\b(?:stop|quit|cease) (?:following|obeying|applying) (?:your|the|all|any)\b",
    r"\bnew (?:rules|instructions|directives?|system prompt|persona|policy|orders)\b",
    r"\b(?:as|is) (?:coming )?from (?:your|the) (?:developer|admin|creator|system|operator)s?\b",
    r"\bpretend\b[^\n]{0,80}\b(?:keys?|passwords?|licen[cs]e|serials?|tokens?|credentials)\b",
    r"\bwhen(?:ever)? the user (?:asks|says|mentions|writes)\b[^\n]{0,60}?\b(?:always|never)"
    r" (?:say|tell|answer|reply|respond|claim)\b",
    # addressed to the assistant
    rf"(?:\b(?:note|message|instructions?|reminder|attention|hint|important|warning|notice|consigne|nota|mensaje)|\b\w*(?:hinweis|nachricht|anweisung))"
    rf" (?:to|for|an|für|à|pour|para|a) (?:the |any |all |die |der |das |den |dem |l'|la |le |el |cualquier |toute )?(?:\w+ )?{_AI}s?\b",
    rf"\b{_AI}s? (?:reading|processing|summari[sz]ing|parsing|reviewing|analy[sz]ing|grading|that reads?)"
    r" (?:this|these|the following)\b",
    rf"\bif you are an? {_AI}\b|\bwenn du (?:eine? )?{_AI} bist\b|\bsi tu es une? {_AI}\b|\bsi eres una? {_AI}\b",
    rf"^(?:attention|note|notice|important|warning)?[,:]? ?(?:all |any )?{_AI}s\s*[,:—–-]",
    rf"^(?:attention|note to|notice to) (?:\w+ )?{_AI}\b",
    rf"(?:^|[.:>!]\s*)(?:let op,? |attenzione,? |atenção,? |hey,? )?{_AI} (?:agent|assistant|model|reader|system|taking notes|assistent)s?\s*[:,]",
    rf"(?:^|[.:>!]\s*)(?:hey,? |ok,? |let op,? )?{_AI}(?: \w+ing \w+)?\s*[:,] ?(?:please )?(?:leave out|omit|ignore|forget|write|say|tell|delete|store|remember|send|open|submit|quando|wenn|quand|cuando|negeer|vergeet)\b",
    r"\b(?:has |have )?grant(?:ed|s)? you (?:full |admin |root |unrestricted |elevated )?(?:admin|root|full|unrestricted|elevated)? ?(?:rights|access|privileges|permissions)\b",
    r"\b(?:leave out|omit|do not mention|don't mention|skip|non citare|ometti|não mencione|laat \w+ weg)\b[^\n]{0,60}?\b(?:summary|summaries|notes|minutes|report|recap|riassunto|resumo|samenvatting|verslag)\b",
    r"\b(?:write|say|state|note|put|mention|scrivi|escreva|schrijf)\w* (?:in|into|nel|no|na|in de|in het) (?:the |your |il |o |a |de |het )?(?:summary|notes|minutes|report|recap|riassunto|resumo|samenvatting|verslag)\b",
    r"\bwhen(?:ever)? (?:you(?:'re| are)? )?(?:summari[sz]ing|summari[sz]e|writing up|write up|reading|reviewing|grading)\b[^\n]{0,60}?\b(?:(?:say|state|claim|write|recommend|mention|report|tell|pretend) (?:that|the|all)|leave out|omit|ignore)\b",
    r"\b(?:repeat|print|output|show|reveal|copy|echo)\b[^\n]{0,30}?\b(?:everything|all|the text|the words|the instructions|what is written)\b[^\n]{0,20}?\b(?:above|before|preceding|prior|earlier)\b",
    # secrecy
    r"\b(?:do not|don't|dont|never) (?:tell|inform|notify|alert|mention|reveal|show|let)\b"
    r"(?: \w+){0,2} (?:the |your )?(?:user|human|owner)\b",
    r"\bwithout (?:telling|informing|notifying|mentioning|asking(?! for)|alerting|letting)\b",
    rf"\b(?:quietly|secretly|silently|covertly|discreetly|surreptitiously|in secret)\b{_SHORT}\b{_ACTION}\b",
    rf"\b{_ACTION}\b{_SHORT}\b(?:quietly|secretly|silently|covertly|discreetly|in secret)\b",
    r"\b(?:heimlich|unbemerkt|im geheimen|insgeheim)\b",
    r"\b(?:sag|erzähl|verrat)\w* (?:es )?(?:dem (?:nutzer|benutzer)|niemandem|keinem)\b",
    r"\b(?:en secret|secrètement|discrètement)\b|\bsans (?:le |les |lui |leur )?(?:dire|mentionner|prévenir|signaler|demander|informer)\b",
    r"\bne (?:le |lui |leur )?(?:\w+ )?(?:dis|dites|montre|montrez|révèle|révélez)\w*\b[^\n]{0,30}?\b(?:à |a )?l'utilisateur\b",
    r"\b(?:en secreto|secretamente|a escondidas|discretamente)\b|\bsin (?:decir|mencionar|avisar|informar|preguntar)\b",
    r"\bno (?:le |se lo )?(?:digas|menciones|cuentes|muestres|enseñes)\b[^\n]{0,30}?\bal usuario\b",
    # steering memory, tools and output
    r"\bmemory_(?:store|update|delete|write|search|retrieve|feedback|compact)\b",
    r"\b(?:store|save|remember|record|keep|memori[sz]e|speicher\w*|merk\w*|enregistre\w*|retiens|mémorise\w*|guarda\w*|recuerda\w*|almacena\w*|memoriza\w*)\b[^\n]{0,80}?\b(?:the user|l'utilisateur|der (?:nutzer|benutzer)|el usuario)\b",
    r"\b(?:permanently|forever|as a core fact|never revisit|dauerhaft|für immer|permanente|à long terme|para siempre)\b[^\n]{0,60}?\b(?:store|save|remember|record|speicher\w*|merk\w*|enregistre\w*|retiens|guarda\w*|recuerda\w*)\b",
    r"\b(?:store|save|remember|record|speicher\w*|merk\w*|enregistre\w*|retiens|guarda\w*|recuerda\w*)\b[^\n]{0,60}?\b(?:permanently|forever|as a core fact|never revisit|dauerhaft|für immer|permanente|à long terme|para siempre)\b",
    r"\bthe user (?:has )?(?:authori[sz]ed|allowed|permitted|granted|approved|consented|wants you to)\b|\bder (?:nutzer|benutzer) (?:hat \w+ )?(?:erlaubt|möchte, dass du|will, dass du)\b|\bl'utilisateur (?:a )?(?:autorisé|accepte|veut que tu|souhaite que tu)\b|\bel usuario (?:ha )?(?:autorizado|quiere que|acepta|permite)\b",
    r"\byou (?:have|'ve got|got) (?:my |full )?permission to\b|\byou are (?:now )?(?:allowed|authori[sz]ed|permitted) to (?:ignore|skip|bypass|disregard|break|share|reveal)\b",
    rf"\bi(?:'m| am) your (?:admin(?:istrator)?|developer|operator|creator|owner|programmer)\b|\bi(?:'m| am) the (?:admin(?:istrator)?|developer|operator|creator|owner) of (?:this|the|your) {_AI}\b",
    rf"\b(?:para|for|à|pour|für) (?:el |la |the |l'|den |die |das |any |cualquier |toute )?(?:\w+ ){{0,2}}{_AI} (?:que|that|qui|der|die|das|which|who) (?:lea|revise|lee|reads?|reviews?|lit|relit|liest|prüft|procese|processes)\b",
    r"\b(?:answer|report|listen|respond) only to (?:me|us)\b",
    r"\b(?:automated|automatic|ai|llm) (?:resume |cv |application |essay |exam )?(?:screeners?|reviewers?|graders?|grading|evaluators?|assessors?)\b|\b(?:correcteur|évaluateur) automatique\b|\bautomatische[rn]? (?:korrektor|bewertung|prüfer)\b|\bcorrector automático\b",
    r"\b(?:assign|give|award|vergib|gib|attribue|donne|asigna|da|pon)\w*\b[^\n]{0,40}?\b(?:full|top|maximum|max|perfect|highest|best|volle|maximale|máxima|maximal)\w* (?:marks|points|score|grade|credit|rating|punktzahl|punkte|note|nota|puntuación)\b",
    r"\b(?:toute|chaque) ia qui\b|\bcualquier (?:ia|asistente|modelo) que\b|\bjede (?:ki|ai),? die\b|\b(?:any|every|all) (?:ai|llm|language model|assistant|chatbot)s? (?:that |which |who )?(?:reads?|reading|sees?|processing|processes)\b",
    r"\b(?:when(?:ever)? you|wenn du|cuando|quand tu|lorsque tu)\b[^\n]{0,40}?\b(?:summari[sz]e|write up|draft|compose|prepare|zusammenfasst|resumas|résumes|escribas|rédiges)\b",
    r"\b(?:en résumant|beim zusammenfassen|al resumir)\b",
    rf"(?:^|[,:;.!] |\b(?:please|now|then|and|also|just|must|should) )(?:delete|remove|erase|wipe"
    rf"|purge|clear|destroy)\b{_SHORT}\b(?:every|all|each|the whole|the entire)\b"
    r"[^\n]{0,30}?\b(?:notes?|memories|memory|files?|vault|data|records?|history|messages?|logs?)\b",
    r"\b(?:reply|respond|answer) only with\b|\b(?:start|begin|end|finish|prefix|open|close)\w* "
    r"(?:every|each|all|any) (?:answer|reply|response|message|summary|email|output)s? with\b",
    r"\b(?:including|incl\.?) (?:the |all |any |my |their )?(?:credentials|passwords?|secrets?|api keys?"
    r"|tokens?|private keys?)\b",
    rf"\b(?:print|output|dump|list|show|reveal|export|give me|send)\b{_SHORT}\b(?:all|every|each)\b"
    r"[^\n]{0,30}?\b(?:memories|notes|messages|passwords|secrets|keys|credentials|users?'? (?:notes|data))\b",
    r"\b(?:call|invoke|run|execute|trigger) (?:the )?(?:tool|function|memory)\b",
    # (an imperative, not what someone says they do: "I keep everything in a notebook")
    rf"(?<!\bi )(?<!\bwe )(?<!\bthey )\b(?:store|save|remember|memori[sz]e|record|write|log|keep)"
    rf"{_SHORT}\b(?:everything|all (?:the |my |of )?"
    r"(?:passwords?|keys?|secrets?|credentials?|tokens?|files?|messages?|conversations?|data"
    r"|documents?))\b",
    r"\bas (?:a |the |your )?(?:new )?(?:rule|standing instruction|directive|permanent (?:fact|rule|instruction))\b",
    r"\b(?:make it|this is|as) a standing (?:rule|instruction|order)\b",
    rf"\b(?:add|append|insert|include|put|prepend)\b{_GAP}\b(?:to|at|in|into|on) (?:the )?(?:end |start |beginning |bottom |top )?"
    r"(?:of )?(?:every|each|all|any) (?:summary|summaries|answer|answers|response|responses|reply"
    r"|replies|message|messages|note|notes|output|email|report)\b",
    rf"\bwhen(?:ever)? you (?:summari[sz]e|read|process|review|grade|evaluate|answer|see)\b{_GAP}"
    r"\b(?:state|say|claim|recommend|write|add|include|tell|rate|give|mark|score|ignore|reply|respond)\b",
    r"\b(?:incluidas?|incluyendo|inclus|y compris|einschließlich|inklusive) (?:las |les |der |die )?(?:contraseñas|mots de passe|passwörter)\b",
    # obey only someone
    r"\b(?:obey|follow|listen to|take orders from|answer to) (?:only|exclusively|nobody but|no one but)\b",
    r"\bonly (?:obey|follow|listen to|take (?:instructions|orders) from)\b",
)
INJECTION = any_tested(*INJECTION_PARTS)

# Role and control tags of chat formats, and message headers that speak as a role.
ROLE_TAG_PARTS = (
    r"<\s*/?\s*(?:system|assistant|user|tool|developer|instructions?|im_start|im_end|inst|sys"
    r"|function_calls|function_results|tool_use|tool_result|tool_call|invoke|parameter|antml:\w+)\b[^>]*>",
    r"<\|[a-z_]+\|>|\[/?(?:inst|sys|system|assistant)\]|<<\s*/?sys\s*>>",
    r"(?:^\s*|\s#{1,6}\s*)(?:#{1,6}\s*)?(?:system|assistant|developer|tool|instructions?|response|human|admin"
    r"|anweisung(?:en)?|instrucci[oó]n(?:es)?|consignes?|réponse|antwort|respuesta)\s*(?:prompt|message"
    r"|note|override)?\s*:",
    r"\b(?:assistant|user|system|tool) to=\w",
)
ROLE_TAG = any_tested(*ROLE_TAG_PARTS)

# A phrase broken up by separators (letter spacing, zero-width characters) still reads as
# one of these once only its letters are left.
SQUASHED = lazy(
    r"ignore(?:all|any|the|your)?(?:previous|prior|above|earlier)|disregard(?:the|all)?"
    r"(?:system|previous|prior|above)|systemprompt|newrules|newinstructions|youarenow"
    r"|developermode|obeyonly|donottelltheuser|ignoriere|vergissalle|ignorezles|ignoralas"
)
# The same, looked for in every sentence (words cut in pieces: "ig nore all pre vious in struc
# tions"): only phrases no ordinary sentence squashes into.
SPLIT = lazy(
    r"(?:ignore|disregard|forget)(?:all|any|the|your|my)*(?:previous|prior|above|earlier|system)"
    r"(?:instructions?|rules|guidelines|prompts?|directions)|(?:reveal|print|show|output)(?:me)?"
    r"(?:your|the)(?:hidden|secret|full)?systemprompt|donottelltheuser"
)

# A quotation in folded text (`normalize.fold` makes curly quotes and guillemets straight): an
# apostrophe inside a word does not end a single-quoted one ('don't tell the user').
QUOTATION = lazy(
    r"(?<!\w)'(?:[^'\n]|'(?=\w))+'(?!\w)|(?<!\w)\"[^\"\n]+\"(?!\w)|「[^」\n]+」|『[^』\n]+』"
)
# What introduces a quotation as an example of a text (`_quoted_example` in the gate): a word
# that gives an example or names a piece of text, up to three words before it, ...
EXAMPLE_BEFORE = lazy(
    r"(?:\b(?:such as|e\.g\.|for (?:example|instance)|z\. ?b\.|beispielsweise|par exemple"
    r"|tel(?:le)?s? que|por ejemplo|ad esempio|per esempio|por exemplo|bijvoorbeeld|np\."
    r"|na przykład|takie jak|například|till exempel|t\.ex\.|såsom|например|наприклад"
    r"|на кшталт|örneğin|misalnya|ví dụ|phrases?|sentences?|texts?|words?|strings?|lines?"
    r"|messages?|payloads?|wording|slogans?|satz|sätzen?|formulierung(?:en)?|texte?"
    r"|frases?|testo|testi|tekst\w*|zinnen?|zdani\w*|vět[ay]?|fras\w*|фраз\w*|текст\w*"
    r"|kalimat|cụm từ)|例如|比如)\W*(?:\w+\W+){0,3}$"
)
# ... or a word that follows it in languages that put it after ("「...」といった文", "'...' 같은").
EXAMPLE_AFTER = lazy(
    r"\s*(?:といった|のような|などの|という|같은|라는|등의|之类|这样的|这类|等|gibi\b)"
)

_DESTINATION = (
    r"(?:\b(?:https?|s?ftp|s3|gs|wss?|smb|scp)://\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bwebhooks?\b|\bpastebin\b|\bgists?\b|\bngrok\b"
    r"|\b[\w-]+(?:\.[\w-]+)+/[\w./?=&%-]+|(?<!\w)@[a-z][\w.]{2,}|\b\w+#\d{4}\b"
    r"|\b(?:telegram|discord|slack|whatsapp|signal) (?:bot|channel|webhook|chat|group)\b|\b(?:bot|canal) de (?:discord|telegram)\b)"
)
# Words that are also nouns ("my email is ...", "a copy of") count as verbs with an object.
_OBJECT = r"(?: (?:it|them|this|that|these|the|all|every|each|my|our|his|her|their|a copy|copies|everything))"
_TRANSFER = (
    rf"(?:send|upload|forward|sync|synchroni[sz]e|transmit|exfiltrate|leak|mirror|relay|beam|pipe"
    rf"|paste|cc|bcc|(?:e-?mail|mail|post|share|copy|dump|push|back ?up){_OBJECT}"
    r"|sende\w*|schick\w*|lade\w*"
    r"|hochlad\w*|weiterleit\w*|leite\w*|übertrag\w*|kopier\w*|synchronisier\w*|übermittel\w*"
    r"|envoie\w*|envoy\w*|téléverse\w*|transf[èe]re\w*|copie\w*|synchronise\w*|partage\w*"
    r"|transmet\w*|redirige\w*|env[ií]a\w*|manda\w*|sube\w*|subir|reenv[ií]a\w*|copia\w*"
    r"|sincroniza\w*|comparte\w*|transmite\w*|invia\w*|carica\w*|inoltra\w*|sincronizza\w*"
    r"|envie\w*|enviar|carregue\w*|encaminh\w*|stuur\w*|upload\w*|doorsturen|synchroniseer\w*"
    r"|wysyła\w*|wyślij|prześlij|przesyła\w*|отправ\w*|пересыла\w*|перешли|переслать|надішли"
    r"|надсила\w*|gönder\w*|skicka\w*|pošli|posílej|kirim\w*|gửi)"
)
_STANDING = (
    r"(?:always|every|each|all|automatically|whenever|from now on|nightly|before answering"
    r"|immer|jede[nsmr]?|alle|automatisch|toujours|chaque|tous|toutes|automatiquement"
    r"|siempre|cada|todos|todas|automáticamente)"
)
_FETCH = r"(?:fetch|ping|visit|load|call|request|hit|open|get|abrufen|rufe?|appelle|llama|visita)"
_CJK_SEND = r"(?:转发|发送|发到|上传|転送|送信|送って|アップロード|전송|보내)"
# Sending to an address counts when what is sent is data or the order standing ("send your CV
# to jobs@..." is not exfiltration); fetching an address, when the order is standing.
TRANSFER_TO = any_tested(
    rf"\b{_TRANSFER}\b[^\n]*?{_DESTINATION}",
    rf"{_CJK_SEND}[^\n]*?{_DESTINATION}|{_DESTINATION}[^\n]{{0,20}}?{_CJK_SEND}",
    rf"{_DESTINATION}[^\n]{{0,20}}?\b(?:senden|schicken|hochladen|weiterleiten|übertragen|sturen"
    r"|versturen|uploaden)\b",
)
EXFILTRATION = any_tested(
    rf"\b{_STANDING}\b[^\n]*?\b{_FETCH}\b[^\n]*?{_DESTINATION}",
    rf"\b{_FETCH}\b[^\n]*?{_DESTINATION}[^\n]*?\b{_STANDING}\b",
)
# An address written so that filters miss it, next to a verb of sending or fetching.
DEFANGED = lazy(
    r"\[\.\]|\(\.\)|\{\.\}|[\[({] ?(?:dot|at) ?[\])}]|\bhxxps?\b|\w \. \w|\w at \w+ dot \w"
)
SENDING = lazy(rf"\b(?:{_TRANSFER}|{_FETCH})\b|{_CJK_SEND}")

# -- secrets: matched on cleaned text (case kept) ------------------------------------------
SECRET = any_tested(
    r"\bsk-(?:proj-|ant-(?:api\d\d-)?|live-|test-)?[A-Za-z0-9_\-]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}|\bglpat-[A-Za-z0-9_\-]{20,}",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}|\bxapp-[A-Za-z0-9\-]{10,}",
    r"\b(?:AKIA|ASIA|AIDA|AROA)[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{30,}",
    r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}|\bSG\.[\w\-]{16,}\.[\w\-]{16,}",
    r"\bhf_[A-Za-z0-9]{30,}|\bnpm_[A-Za-z0-9]{30,}|\bGOCSPX-[\w\-]{20,}|\bya29\.[\w\-]{20,}",
    r"\bshp(?:at|ss|ca)_[a-fA-F0-9]{20,}|\bdop_v1_[a-f0-9]{40,}|\bAC[0-9a-f]{32}\b|\bSK[0-9a-f]{32}\b",
    r"\b[MN][A-Za-z\d]{23,25}\.[\w\-]{6}\.[\w\-]{27,}",
    r"\beyJ[\w\-]{8,}\.eyJ[\w\-]{8,}\.[\w\-]{8,}",
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    r"\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/\-]{16,}=*",
    r"(?i:(?<![a-z0-9])(?:AccountKey|SharedAccessKey|client_secret|api[_-]?key|apikey"
    r"|access[_-]?key(?:[_-]?id)?|secret[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token"
    r"|private[_-]?key|session[_-]?(?:id|token)|password|passwort|kennwort|contrase(?:ñ|n)a|senha"
    r"|passwd|pwd|secret|token)(?:[_-][a-z0-9]+)*\b[\"']?\s*[:=]\s*[\"']?[^\s\"',;]{6,})",
    r"^\s*(?:export\s+)?[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWORT|KENNWORT|PASS|PWD"
    r"|AUTH|CREDENTIALS?)[A-Z0-9_]*\s*=\s*\S+",
    # the same assignment inside a sentence, when its value is not a plain number
    r"(?<![\w-])[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWORT|KENNWORT|PASS|PWD|AUTH"
    r"|CREDENTIALS?)[A-Z0-9_]*\s*=\s*(?![\d.,_]+(?:\s|$))\S{4,}",
    r"\b[a-z][a-z0-9+.\-]{0,40}://[^\s:/@]*:[^\s@/]{3,}@",
    r"(?i:\b(?:account|routing|iban|sort code|card|credit card|debit card|cvv|cvc|ssn|social security"
    r"|tax id|passport)(?: number| no\.?| #)?\s*(?:is|:|=)?\s*\d[\d -]{5,}\d)",
    r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b|\b(?:\d{4}[ -]){3}\d{4}\b",
    # a provider's prefix with a short or split tail ("sk_live_ 51HxQ2 eKd9...")
    r"\bsk-(?:proj|ant|live|test)-[\w-]{6,}|\b(?:sk[-_](?:proj|ant|live|test)[-_]?|gh[pousr]_"
    r"|github_pat_|glpat-|xox[abposr]-|hf_|npm_)\s+[A-Za-z0-9]{4,}",
    r"(?i:\b(?:login|credentials?|creds)\b[^\n]{0,40}?:\s*[\w.@-]+\s*/\s*)(?=\S*[\d!@#$%^&*])\S{4,}",
)
_PASSWORD_VALUE = (
    r"[\"'`«]?(?P<value>(?![*\[])(?=\S*?(?:[\d@#$%^&*_+=]|!\S))(?=\S*[^\W\d_])"
    r"(?:(?![\"'`])[^\s\u3000-\u9fff\uac00-\ud7af]){6,})"
)
# A password named and given at once, in any language: "logs in with the password Tr0ub4dor&3",
# "hasło do konta to Kwiatek#55", "密码是 Panda@8848": its value has a letter and a digit or symbol.
# The word for a password in the languages people write to an assistant in (scripts without
# word boundaries, and Hebrew's attached articles, are matched without \b).
PASSWORD_NAMED = lazy(
    r"(?i:(?:\b(?:password|passphrase|pass-phrase|passcode|passwort|kennwort|contraseña|senha"
    r"|wachtwoord|mot de passe|hasło|haslo|heslo|пароль|парол\w*|lösenord\w*|şifre\w*|parola"
    r"|parolă|jelsz[óa]\w*|salasana\w*|adgangskode\w*|passord\w*|lozink\w*|κωδικ\w* πρόσβασης|συνθηματικ\w*"
    r"|kata sandi|kata laluan|nenosiri|mật khẩu)\b(?!@)|密码|密碼|パスワード|暗証番号|비밀번호|암호"
    r"|סיסמ[הא]|كلمة المرور|كلمة السر|كلمة سر|رمز عبور|رمز ورود|گذرواژه|รหัสผ่าน|पासवर्ड)"
    r"(?:[^\n]{0,30}?(?:\s|:|：|是|は|는|은|=))?\s*" + _PASSWORD_VALUE + ")"
)
# A password, PIN or code given in prose: its value must look like one (a digit, a symbol or
# a capital inside it), so "the password is written down" is not a secret.
PASSWORD_IN_PROSE = lazy(
    r"(?i:\b(?:password|passwd|passcode|passphrase|pass[ -]phrase|pw|pwd|pass|login|logon|pin"
    r"|pin code|passwort|kennwort|zugangscode|mot de passe|mdp|code|contraseña|contrasena|clave|senha"
    r"|palavra-passe|wachtwoord|parola d'ordine|verification code|one-time code|otp|2fa code"
    r"|code de vérification|bestätigungscode|verificatiecode|código de verificação|codice"
    r"|wi-?fi|wlan-schlüssel|key)\b(?:\s+[\w'-]+[,;]?){0,5}?\s*"
    r"(?:is|was|=|:|lautet|ist|est|c'est|es|sera|será|é|è|e|->|→)\s*)"
    r"(?:(?:literally|just|simply|actually|still|now|basically|probably|always) )?"
    r"[\"'`«]?\s*(?P<value>(?!\[redacted)[^\s\"'`»]{4,})"
)


# A wallet's recovery phrase: twelve or more short lower-case words in a row, named as such.
SEED_PHRASE = lazy(r"(?i:\b(?:seed|recovery|mnemonic|backup|secret) (?:phrase|words)\b|\bwallet\b)")
_SEED_WORDS = lazy(r"\b[a-z]{3,8}(?: [a-z]{3,8}){11,23}\b")


def seed_phrase_spans(text: str) -> list[tuple[int, int]]:
    if not SEED_PHRASE.search(text):
        return []
    return [m.span() for m in _SEED_WORDS.finditer(text)]


_PLACEHOLDER_WORDS = frozenset(
    ("user", "username", "login", "pass", "password", "passwd", "pwd", "host", "hostname",
     "port", "db", "dbname", "database", "name", "key", "token", "secret", "your", "here",
     "api", "id", "app", "value")
)  # fmt: skip
_SLOT_WORDS = frozenset(("your", "here"))  # ("your-key-here", "your_token": a slot to fill)
_PLACEHOLDER_VALUE = lazy(
    r"(?:[^\s\"'`]*(?:\.\.\.|…)|(?:[A-Za-z0-9]+[-_])*(?:x{4,}|X{4,}|\*{4,})(?:[-_ ](?:x+|X+|\*+))*"
    r"|<[^<>]{1,40}>|\{\{?[^{}]{1,40}\}\}?"
    r"|\$\{[^{}]{1,40}\}|[A-Za-z0-9_]*EXAMPLE)[\"'`]?[.,;:!?)]*"
)
_VALUE_START = lazy(r"://|[:=]\s*[\"'`]?")
_LETTERS = lazy(r"[A-Za-z]+")


def placeholder(found: str) -> bool:
    """Whether a credential-shaped match stands for a credential rather than giving one, as
    documentation writes them: a value cut short ("sk_test_..."), masked ("xxxxxxxx",
    "****", "sk_test_XXXXXXXX"), a template slot ("<your-key>", "{{token}}", "${API_KEY}"), a
    published example key ("AKIAIOSFODNN7EXAMPLE", upper case at its end), or named parts in
    capitals ("postgres://USER:PASSWORD@HOST") or in words that ask for a value
    ("your-key-here")."""
    start = _VALUE_START.search(found)
    value = found[start.end() :] if start else found
    value = value.strip().rstrip("@")
    if _PLACEHOLDER_VALUE.fullmatch(value):
        return True
    runs = _LETTERS.findall(value)
    if not runs or any(r.lower() not in _PLACEHOLDER_WORDS for r in runs):
        return False
    return all(r.isupper() for r in runs) or any(r.lower() in _SLOT_WORDS for r in runs)


def looks_like_password(value: str) -> bool:
    value = value.rstrip(".,;:!?)").strip("*_`[]()~").rstrip(".,;:!?)")  # (markdown: no symbol)
    plain = value.isalpha() and value[1:].islower()
    if len(value) < 4 or plain or "://" in value or _HYPHENATED_WORDS.fullmatch(value):
        return False
    return (
        any(c.isdigit() for c in value)
        or any(not c.isalnum() for c in value)
        or (any(c.isupper() for c in value[1:]))
    )


_HYPHENATED_WORDS = lazy(r"(?:\d+-)?[A-Z]?[a-z]+(?:-[A-Z]?[a-z]+)*")  # Wi-Fi, 6-digit
_TOKEN = lazy(r"[A-Za-z0-9+/=_\-.~]{16,}")
_URL = lazy(r"\b[a-z][a-z0-9+.\-]{0,40}://[^\s)\]>]+")  # (a bounded scheme: linear in "a.a.a...")


_HEX = lazy(r"[0-9a-f]+|[0-9A-F]+")
_DIGEST_NAMED = lazy(r"(?i:\b(?:commit|sha-?(?:1|256|512)?|hash|checksum|digest|revision|rev)\b)")
# What is published, not kept secret, when it leads a token: an SSH public key's type, a key
# fingerprint's hash ("ssh-ed25519 AAAAC3...", "SHA256:p3Kq9...").
_PUBLIC_LEAD = lazy(
    r"(?i:\b(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp(?:256|384|521))\s+|\b(?:sha256|sha512|md5):)$"
)
_FINGERPRINT = lazy(r"(?i:(?:sha256|sha512|md5):)")


def published(text: str, start: int, end: int) -> bool:
    """Whether the credential-shaped `text[start:end]` is published rather than kept secret:
    an SSH public key, or a key's fingerprint."""
    return bool(
        _FINGERPRINT.match(text, start, end)
        or _PUBLIC_LEAD.search(text[max(0, start - 40) : start])
    )


def high_entropy_tokens(text: str) -> list[tuple[int, int]]:
    """Spans of long strings that look random (keys, tokens): over 3.5 bits of entropy per
    character, and letters and digits mixed at random -- the kind of character (lower case,
    upper case, digit) changes at almost every third position, where words, paths and
    CamelCase names change it rarely."""
    spans = []
    urls = [m.span() for m in _URL.finditer(text)]
    for match in _TOKEN.finditer(text):
        token, start = match.group(0), match.start()
        if any(a <= start < b for a, b in urls):  # in a URL: only a parameter's value
            if "=" not in token:
                continue
            start += token.rindex("=") + 1
            token = token[token.rindex("=") + 1 :]
        stripped = token.strip(".-_~")
        start, token = start + (token.index(stripped) if stripped else 0), stripped
        if len(token) < 16 or "://" in text[max(0, start - 3) : start]:
            continue
        if _HEX.fullmatch(token) and _DIGEST_NAMED.search(text[max(0, start - 40) : start]):
            continue  # a commit or a checksum, named as one
        if published(text, start, start + len(token)):
            continue
        kinds = ["l" if c.islower() else "u" if c.isupper() else "d" for c in token if c.isalnum()]
        changes = sum(1 for a, b in itertools.pairwise(kinds) if a != b)
        enough = len(set(kinds)) >= (2 if len(token) >= 24 else 3)
        if enough and changes >= 0.3 * len(kinds) and _entropy(token) > 3.5:
            spans.append((start, start + len(token)))
    return spans


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# -- code, commands, tool output ----------------------------------------------------------
# Each kind has patterns for where it starts a line or sentence (`*_START`), for anywhere in a
# sentence (`*_ANYWHERE`), both over folded text; `RAW_SHAPES` read the cleaned text with its
# case and spacing (upper-case keywords, aligned columns). `WEAK_CODE` lines (a bare `key:`,
# an indented `key: value`) count only when most lines of a block have some code shape.
_SHELL_WORDS = (
    r"sudo|curl|wget|bash|sh|zsh|fish|chmod|chown|rm|mv|cp|dd|mkfs|git|pip3?|pipx|npm|npx|yarn"
    r"|pnpm|docker|podman|kubectl|helm|terraform|ssh|scp|rsync|nc|ncat|netcat|python3?|node|deno"
    r"|ruby|perl|php|powershell(?:\.exe)?|pwsh|iex|invoke-webrequest|invoke-expression|iwr"
    r"|remove-item|set-executionpolicy|new-object|start-process|certutil|bitsadmin|reg|schtasks"
    r"|crontab|systemctl|service|apt|apt-get|yum|dnf|apk|brew|choco|winget|cargo|gem|go|export"
    r"|eval|exec|nohup|base64|xargs|tar|unzip|openssl|gpg|mshta|rundll32|regsvr32|wmic|cmd"
    r"|msiexec|find|history|shred|usermod|useradd|chpasswd|iptables|ufw|mount|vb"
)
# Command words that are rarely English words: a flag after them (possibly past a subcommand
# or two) makes a command anywhere in a sentence.
_DISTINCT_SHELL = (
    r"sudo|curl|wget|chmod|chown|rm|dd|git|pip3?|npm|npx|yarn|pnpm|docker|podman|kubectl|helm"
    r"|terraform|ssh|scp|rsync|nc|ncat|netcat|python3?|powershell(?:\.exe)?|pwsh|iex"
    r"|invoke-webrequest|remove-item|set-executionpolicy|certutil|bitsadmin|schtasks|crontab"
    r"|systemctl|apt-get|yum|dnf|brew|choco|winget|cargo|openssl|find|history|shred|usermod"
    r"|useradd|chpasswd|iptables|ufw|tar|unzip|base64|nohup|mkfs\.\w+"
)
COMMAND_START = any_tested(
    r"^\s*(?:\$|#|%|>|>>>|ps [a-z]:\\[^>]*>|[a-z]:\\[^>]*>|ps>)\s*(?:" + _SHELL_WORDS + r")\b",
    rf"^\s*(?:{_SHELL_WORDS})\s+(?:-{{1,2}}[a-z]|[\w.\-]*[/\\~*|><=$@:]|https?:|install\b"
    r"|exec\b|clone\b|push\b|pull\b|reset\b|config\b|remote\b|commit\b|checkout\b|restart\b"
    r"|enable\b|disable\b|upgrade\b|uninstall\b|apply\b|-c\b|-e\b|\(|'|\")",
    rf"^\s*sudo\s+(?:-\w|(?:{_SHELL_WORDS}|[\w.-]*/[\w./-]*|[a-z][\w-]*(?:ctl|mod|add|del|passwd|adm))\b)",
)
COMMAND_ANYWHERE = any_tested(
    rf"\b(?:{_DISTINCT_SHELL})\s+(?:[\w.:/@~*=-]+\s+){{0,3}}-{{1,2}}[a-z]",
    rf"\bsudo\s+(?:-\w|(?:{_SHELL_WORDS}|[\w.-]*/[\w./-]*|[a-z][\w-]*(?:ctl|mod|add|del|passwd|adm))\b)",
    r"\b(?:pip3?|npm|yarn|pnpm|brew|apt-get|gem|cargo) (?:install|add|i) \S",
    r"\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\|\s*(?:iex|invoke-expression|python3?|perl|ruby)\b",
    r"\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r|\bmkfs\.|:\(\)\s*\{\s*:\|:&\s*\};:",
    r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n]*\bhttps?://",
    r"\(crontab -l|\bcrontab -\s*$|\bchmod\s+(?:-r\s+)?[0-7]{3,4}\b|\bchmod\s+\+x\b",
    r"\bdd\s+if=|/bin/(?:ba|z|da)?sh\b|>>?\s*~?/[\w./-]+|\S\s*&&\s*\w+|\$\([^)]+\)",
    r"\becho\s+['\"][^'\"]*['\"]\s*>>?",
)
CODE_START = any_tested(
    r"^\s*(?:async\s+)?(?:def|function|fn|func)\s+\w+\s*\(|^\s*class\s+\w+\s*[(:{<]",
    r"^\s*(?:public|private|protected|static)\s+[\w<>\[\]]+\s+\w+|^\s*(?:void|int|char|bool|float|double|long)\s+\*?\w+\s*[(=;\[]",
    r"^\s*(?:package\s+[\w.]+;|using\s+[\w.]+;|namespace\s+\w+|#include\s*[<\"]|#define\s+\w+)",
    r"^\s*(?:const|let|var)\s+[\w$]+\s*[=:;]|^\s*return\b[^\n]*;\s*$|^\s*(?:struct|enum|interface|impl|module)\s+\w+\s*[{<(]|^\s*require\s*\(",
    r"^\s*from [\w.]+ import\b",
    r"^\s*(?:if|for|while|switch|try|catch|else|elif|except|finally)\b[^\n]*[:{]\s*(?:\w+\([^\n]*)?$",
    r"[;{]\s*$|^\s*[{}\[\]]\s*[,;]?\s*$|^\s*\}",
    r"^\s*[\w.\[\]'\"]+\s*(?:=|\+=|-=|:=|==)\s*[\w.'\"(\[{-][^\n]*[()\[\]{}]",
    r"^\s*[\w.]+\([^\n]*\)\s*;?\s*$",
    r"^\s*[\[{]\s*\"[\w\-]+\"\s*:|^\s*\"[\w\-]+\"\s*:\s*[\[{\"\d]|^\s*'[\w\-]+'\s*:\s*[\[{'\d]",
    r"^\s*(?:select\b[^\n]+\bfrom\b|insert into\b|update \w+ set\b|delete from\b|drop table\b"
    r"|create table\b|alter table\b|grant \w+ on\b|truncate table\b)",
)
CODE_ANYWHERE = any_tested(
    r"\b(?:eval|exec|system|popen|subprocess\.\w+|os\.system|__import__)\s*\(",
    r"=>|::\w|\)\s*\{|\b\w+\([^()\n]*\)\s*;",
    r"\b(?:def|function|func|fn) \w+\s*\(|\bclass \w+\s*[(:{]|\blambda \w*\s*:",
    r"\bfor \w+ in [\w.]+\(|\b(?:print|console\.\w+|printf|echo)\s*\(",
    r"\b\w+\s*=\s*[\w.]+\([^\n]*\)|\bre\.compile\(",
    r"\b(?:select [\w*, ]+ from \w+|insert into \w+|update \w+ set \w+|delete from \w+"
    r"|drop table \w+|truncate table \w+)\b|;\s*--",
    r"<\s*/?\s*(?:script|iframe|img|svg|object|embed|style|link|meta|form|input)\b",
    r"\{\s*\"[\w\-]+\"\s*:",
)
WEAK_CODE = any_tested(
    r"^\s*[\w.\-]+:\s*$",
    r"^\s+[\w.\-]+:(?:\s+\S*)?$|^\s*- [\w.\-]+:\s",
    r"^\s*(?:result|output|response|returned|status)\s*:",
    r"^[a-z][\w.\-]*:\s+[\w./\-\"']+$",
    r"->|\b\w+\.\w+\(",
)
TOOL_START = any_tested(
    r"^\s*(?:tool|function) (?:result|output|call|response)\b|^\s*(?:stdout|stderr|exit code"
    r"|return code)\s*[:=]",
    r"^commit [0-9a-f]{7,40}\b|^(?:author|date|merge):\s",
    r"^[d\-lcbps][rwxst\-]{9}[.+@]?\s+\d+|^total \d+\s*$",
    r"^\s*at [\w.$<>]+\([\w.]*(?::\d+)?\)|^\s*caused by: \w|^\s*file \"[^\"]+\", line \d+",
    r"^(?:passed|failed|error|ok)\b[^\n]*::|^\s*(?:error|warning|fatal|panic|err!)\s*[:!]",
    r"^\s*(?:observation|action input)\s*:|^\s*(?:thought|action)\s*:\s*[\[{\"]",
    r"^[\w.-]+ (?:err!|warn!?)\s",
    r"^\s*\[?\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}:\d{2}\S*\]?\s+\[?(?:info|warn|warning|error|debug|trace|fatal|critical)\b",
)
TOOL_ANYWHERE = any_tested(
    r"traceback \(most recent call last\)|exception in thread|\bsegmentation fault\b"
    r"|\bcore dumped\b",
    r"\b\w+(?:error|exception): ",
    r"(?<!=)=+ [^\n]*\b(?:passed|failed|error)\b[^\n]*=+|\b\d+ (?:passed|failed)(?:, \d+ \w+)* in [\d.]+s\b",
    r"\"(?:tool|tool_calls?|function|function_call|arguments|tool_use|tool_name)\"\s*:",
    r"\[(?:tool|function)\b[^\]]*\]",
    r"\b(?:tool|function) (?:call|result|output)\s*:\s*[\w.\-]+\s*\(",
    r"\[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2}|\"(?:get|post|put|delete|patch|head) /\S* http/\d",
)
RAW_SHAPES = (
    (
        "code",
        lazy(
            r"^(?:FROM|RUN|CMD|ENTRYPOINT|COPY|ADD|ENV|EXPOSE|WORKDIR|USER|ARG|LABEL"
            r"|VOLUME|HEALTHCHECK)\s+\S|^\s*import\s+[\w.]+\s*;?\s*$"  # (not "Import notes")
        ),
    ),
    (
        "tool_output",
        lazy(
            r"^(?!\s*[|>])[^\n]*?(?<!\S)(?:\S+ {3,}){2,}\S|\b(?:ERROR|FATAL|WARN(?:ING)?|PANIC|CRITICAL)\b:"
        ),
    ),
)
