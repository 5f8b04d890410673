"""Conversation summaries: extractive offline (decisions, open questions, facts, names), or
by the model within a word limit. Either way through the gate: the offline summary picks
only sentences the gate lets pass; the model's is redacted where the gate refuses a part."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from vault_brain.domain.engine import METHOD_LLM, METHOD_OFFLINE, JSONChat, run_with_fallback
from vault_brain.domain.errors import LLMError
from vault_brain.domain.gate import judge, prose_sentences, redact
from vault_brain.domain.text import INLINE_CODE, content_words, counted, words, wordset

DEFAULT_SUMMARY_WORDS = 150
_MAX_MESSAGE_CHARS = 4000

SUMMARY_SYSTEM = (
    "You summarize a conversation for an AI agent's long-term memory. Reply with a JSON object: "
    '{"summary": str, "decisions": [str], "facts": [str], "open_questions": [str], '
    '"names": [str]}. summary: plain prose within the word limit given, keeping decisions, '
    "durable facts and questions still unanswered at the end; drop small talk. The lists hold "
    "short sentences taken from the conversation; names lists the people, projects and other "
    "proper nouns that matter. Never invent anything."
)


@dataclass(frozen=True)
class Summary:
    text: str
    method: str
    decisions: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    """What the gate kept out of the summary, by reason."""
    total: int = 0
    """The messages summarized."""

    def screenable(self) -> list[str]:
        """What of the summary may carry another party's words: its decisions, facts and
        open questions, and a model's prose sentence by sentence (the offline prose is
        made of the items)."""
        prose = prose_sentences(self.text)[0] if self.method == METHOD_LLM else []
        return [*self.decisions, *self.facts, *self.open_questions, *prose]

    def without(self, flagged: Mapping[str, str]) -> Summary:
        """This summary without the `flagged` items and prose sentences (each with the
        reason it was refused), counted in `refused`."""
        if not flagged:
            return self
        refused = Counter(self.refused)
        refused.update(flagged[t] for t in dict.fromkeys(self.screenable()) if t in flagged)
        decisions, facts, questions = (
            [item for item in items if item not in flagged]
            for items in (self.decisions, self.facts, self.open_questions)
        )
        if self.method == METHOD_LLM:
            text = self.text
            for sentence in flagged:
                text = text.replace(sentence, "")
            text = " ".join(text.split())
        else:
            text = _render_summary(decisions, facts, questions, self.names, self.total)
        return replace(
            self,
            text=text,
            decisions=decisions,
            facts=facts,
            open_questions=questions,
            refused=dict(refused),
        )

    def with_facts(self, kept: Sequence[str]) -> Summary:
        """This offline summary with the facts capture `kept` that its own loose pick of
        sentences missed (a model's summary stays as it wrote it)."""
        more = [k for k in kept if not any(k.lower() in f.lower() for f in self.facts)]
        if self.method == METHOD_LLM or not more:
            return self
        facts = [*self.facts, *more]
        text = _render_summary(self.decisions, facts, self.open_questions, self.names, self.total)
        return replace(self, text=text, facts=facts)


_DECISION = re.compile(
    r"\b(?:decided|decide to|decision is|agreed|agree to|we will|we'll|we are going to|"
    r"we're going to|let's|let us|chose|choose to|chosen|going with|go with|settled on|"
    r"plan is to|will use|won't use|signed off)\b",
    re.IGNORECASE,
)
_FACT_MARKER = re.compile(
    r"\b(?:is|are|was|were|prefers?|likes?|loves?|hates?|works (?:at|on|for|as)|lives in|"
    r"uses|has|costs?|due|deadline|runs on|needs|requires|owns|leads|manages|born|joined|"
    r"moved to|started)\b|\d",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ok|okay|cool|great|nice|awesome|perfect|sounds good|"
    r"got it|sure|yes|yeah|yep|no|nope|lol|haha|good morning|good night|bye|cheers|"
    r"how are you|how's it going|you're welcome|no problem|np|will do)\b",
    re.IGNORECASE,
)
_OFFER = re.compile(
    r"\b(?:anything|something) else\b|\banything I can\b|\bcan I (?:help|do)\b|\bhelp you\b|"
    r"\bon your mind\b|\bhow (?:are|about) you\b|\bhow(?:'s| is) it going\b",
    re.IGNORECASE,
)
_ANSWER_OPENER = re.compile(
    r"^\s*(?:yes|yeah|yep|no|nope|sure|correct|right|exactly|definitely|absolutely|"
    r"of course|not yet|never)\b",
    re.IGNORECASE,
)
_NAME_RUN = re.compile(r"[A-Z][A-Za-z0-9'’-]*(?:\s+[A-Z][A-Za-z0-9'’-]*)*")
# a sentence opened by one word and a comma or a stop ("Noted, thanks.", "Done.")
_INTERJECTED = re.compile(r"[A-Z][a-z]+[,.!]")
_NOT_NAMES = wordset(
    """I I'm I've I'll I'd OK Ok Yes No Hi Hello Hey Thanks Sure Okay Also Then So But And Or Maybe
    Please Great Sounds Let Let's We You It This That These Those There Here What When Where Why
    How Who Which Can Could Would Should Will Do Does Did Is Are Was Were Have Has Had If In On At
    For From To With After Before Our My Your Their His Her They He She Good Not Just Now Today
    Tomorrow Yesterday Next Last First Any All Some One Every Each Note Yep Nope Right Agreed Done
    Cool Nice Perfect Awesome Yeah Well Oh Actually However Because Since Once Until While As
    The A An Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April
    May June July August September October November December Q1 Q2 Q3 Q4 TODO"""
)


@dataclass(frozen=True)
class _Sentence:
    order: int
    message: int
    role: str
    text: str


def _message_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style content parts
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


def _role_of(message: Mapping[str, Any]) -> str:
    """A chat message's `role`, or a transcript record's `type` (user, assistant, tool_...)."""
    return str(message.get("role") or message.get("type") or "user")


def _transcript_sentences(
    messages: Sequence[Mapping[str, Any]],
) -> tuple[list[_Sentence], Counter[str]]:
    """The sentences of the conversation the gate lets pass, and what it refused."""
    out: list[_Sentence] = []
    refused: Counter[str] = Counter()
    for index, message in enumerate(messages):
        role = _role_of(message)
        if role not in ("user", "assistant"):
            continue  # system prompts and tool output are not the conversation
        kept, dropped = prose_sentences(_message_text(message.get("content")))
        refused.update(dropped)
        for text in kept:
            out.append(_Sentence(len(out), index, role, text))
    return out, refused


def _is_small_talk(text: str) -> bool:
    tokens = words(text)
    if len(tokens) < 3:
        return True
    return (
        len(tokens) <= 6
        and bool(_SMALL_TALK.match(text))
        and not _DECISION.search(text)
        and not re.search(r"\d", text)
    )


def _is_answered(question: _Sentence, transcript: list[_Sentence]) -> bool:
    asked = content_words(question.text)
    later = [s for s in transcript if s.message > question.message and s.role != question.role]
    if later and _ANSWER_OPENER.match(later[0].text):  # the next reply opens with yes / no
        return True
    need = min(2, len(asked))
    return any(
        not s.text.endswith("?") and len(asked & content_words(s.text)) >= need for s in later
    )


def _names(transcript: Sequence[_Sentence]) -> list[str]:
    all_text = " ".join(s.text for s in transcript)
    lower_words = {w for w in words(all_text) if w.islower()}
    counts: dict[str, int] = {}
    first_seen: dict[str, int] = {}
    for sentence in transcript:
        text = INLINE_CODE.sub(" ", sentence.text).replace("’", "'")
        for match in _NAME_RUN.finditer(text):
            tokens = [re.sub(r"['’]s$", "", t).strip("'’-") for t in match.group(0).split()]
            # at a sentence start, a capitalised common word is not a name
            while tokens and (tokens[0] in _NOT_NAMES or tokens[0].lower() in lower_words):
                tokens = tokens[1:]
            tokens = [t for t in tokens if t]
            if not tokens or (len(tokens) == 1 and tokens[0] in _NOT_NAMES):
                continue
            if match.start() == 0 and len(tokens) == 1 and _INTERJECTED.match(text):
                continue  # "Noted, thanks.": a one-word reply opening a sentence, no name
            name = " ".join(tokens)
            counts[name] = counts.get(name, 0) + 1
            first_seen.setdefault(name, len(first_seen))
    return sorted((n for n, c in counts.items() if c > 1), key=lambda n: first_seen[n])


def _render_summary(
    decisions: list[str], facts: list[str], questions: list[str], names: list[str], total: int
) -> str:
    blocks: list[str] = []
    for heading, items in (
        ("Decisions", decisions),
        ("Facts", facts),
        ("Open questions", questions),
    ):
        if items:
            blocks.append(heading + ":\n" + "\n".join(f"- {item}" for item in items))
    if names:
        blocks.append("Names: " + ", ".join(names))
    if not blocks:
        return f"No decisions, facts or open questions in {counted(total, 'message')}."
    return "\n".join(blocks)


def summarize_offline(
    messages: Sequence[Mapping[str, Any]],
    max_words: int = DEFAULT_SUMMARY_WORDS,
    method: str = METHOD_OFFLINE,
) -> Summary:
    """Extractive: decisions first, then open questions, then facts, within `max_words`."""
    transcript, refused = _transcript_sentences(messages)
    kinds: dict[int, str] = {}
    seen: set[str] = set()
    for sentence in transcript:
        key = " ".join(sentence.text.lower().split())
        if key in seen or _is_small_talk(sentence.text):
            continue
        seen.add(key)
        if sentence.text.endswith("?"):
            # the assistant's offers ("Anything else on your mind?") are not open questions
            offer = sentence.role == "assistant" and _OFFER.search(sentence.text)
            if (
                content_words(sentence.text)
                and not offer
                and not _is_answered(sentence, transcript)
            ):
                kinds[sentence.order] = "question"
        elif _DECISION.search(sentence.text):
            kinds[sentence.order] = "decision"
        elif len(sentence.text.split()) >= 4 and _FACT_MARKER.search(sentence.text):
            kinds[sentence.order] = "fact"
    kept: set[int] = set()
    budget = max_words
    for kind in ("decision", "question", "fact"):
        for order in sorted(o for o, k in kinds.items() if k == kind):
            size = len(transcript[order].text.split())
            if size <= budget:
                kept.add(order)
                budget -= size

    def pick(kind: str) -> list[str]:
        return [s.text for s in transcript if s.order in kept and kinds[s.order] == kind]

    decisions, facts, questions = pick("decision"), pick("fact"), pick("question")
    names = _names(transcript)
    ids = [str(m["id"]) for m in messages if m.get("id") is not None]
    text = _render_summary(decisions, facts, questions, names, len(messages))
    return Summary(
        text, method, decisions, facts, questions, names, ids, dict(refused), len(messages)
    )


def _string_list(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise LLMError(f"the model's {name} is not a list", hint="retry, or use offline methods")
    return [" ".join(item.split()) for item in value if isinstance(item, str) and item.strip()]


def _bound_words(text: str, max_words: int) -> str:
    words = text.split()
    if len(words) <= max_words:
        return " ".join(words)
    cut = " ".join(words[:max_words])
    end = max(cut.rfind(". "), cut.rfind("? "), cut.rfind("! "))
    return cut[: end + 1] if end > len(cut) // 2 else cut + " …"


def _format_transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    lines = []
    for message in messages:
        role = _role_of(message)
        if role not in ("user", "assistant"):
            continue
        text = _message_text(message.get("content")).strip()
        if len(text) > _MAX_MESSAGE_CHARS:
            text = text[:_MAX_MESSAGE_CHARS] + " […]"
        if text:
            lines.append(f"{role}: {text}")
    return "\n\n".join(lines)


def summarize(
    messages: Sequence[Mapping[str, Any]],
    llm: JSONChat | None = None,
    max_words: int = DEFAULT_SUMMARY_WORDS,
    *,
    fallback: bool = True,
) -> Summary:
    """Summarize a conversation (`messages`: dicts with role, content and optional id)."""

    def with_llm(model: JSONChat) -> Summary:
        prompt = (
            f"Summarize this conversation in at most {max_words} words.\n\n"
            f"{_format_transcript(messages)}"
        )
        data = model.chat_json(SUMMARY_SYSTEM, prompt, reply="summary")
        text = data.get("summary")
        if not isinstance(text, str) or not text.strip():
            raise LLMError(
                "the model's summary reply has no 'summary' text",
                hint="retry, or unset VB_LLM_MODEL to use the offline methods",
            )
        ids = [str(m["id"]) for m in messages if m.get("id") is not None]
        refused: Counter[str] = Counter()
        safe_text, found = redact(_bound_words(text, max_words))
        refused.update(found)

        def safe(name: str) -> list[str]:
            items = _string_list(data.get(name), name)
            kept = [item for item in items if judge(item).ok]
            refused["list item"] += len(items) - len(kept)
            return kept

        return Summary(
            safe_text,
            METHOD_LLM,
            safe("decisions"),
            safe("facts"),
            safe("open_questions"),
            safe("names"),
            ids,
            {k: v for k, v in refused.items() if v},
            len(messages),
        )

    return run_with_fallback(
        llm, with_llm, lambda m: summarize_offline(messages, max_words, m), fallback
    )
