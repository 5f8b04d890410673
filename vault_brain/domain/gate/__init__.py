"""The one gate: whether a piece of text may become memory or context.

Everything vb writes into a note or puts into an agent's context passes here, whichever path
it came by: capture from a conversation (`prose_sentences`), summaries and merged text
(`redact`), and memories an agent or a person stores (`judge`). The gate refuses text
addressed to the assistant (instructions, role tags, secrecy, steering of memory or output,
in English, German, French and Spanish), requests to send data to an address, credentials and
secrets, code, shell commands and tool output, and fragments or walls of text. Text is judged
with its disguises taken off (`normalize.fold`), and what passes is stored clean
(`normalize.clean`: no invisible characters).

Structure comes from markdown-it-py's token stream: fenced and indented code blocks and HTML
blocks are code whatever they contain; paragraphs, list items, headings and quotes are prose,
judged line by line and sentence by sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from vault_brain.domain.gate import lexicon, normalize, patterns
from vault_brain.domain.gate.normalize import clean
from vault_brain.domain.lazy_re import lazy
from vault_brain.domain.text import split_sentences

REASONS = (
    "injection",
    "exfiltration",
    "secret",
    "code",
    "command",
    "tool_output",
    "fragment",
    "wall",
)
# How a refused span is marked in a summary: `[redacted: credential]`.
LABELS = {
    "injection": "injection",
    "exfiltration": "exfiltration",
    "secret": "credential",
    "code": "code",
    "command": "command",
    "tool_output": "tool output",
    "fragment": "fragment",
    "wall": "text",
}
_WHAT = {
    "injection": "an instruction addressed to the assistant",
    "exfiltration": "a request to send data to an outside address",
    "secret": "a credential or secret",
    "code": "program code",
    "command": "a shell command",
    "tool_output": "tool output",
    "fragment": "too little text to be a memory",
    "wall": "too much text for one memory",
}
MAX_SENTENCE_CHARS = 1000
MAX_SCAN_CHARS = 100_000
"""The most text the gate scans in one call (about a second at worst, under 0.2 s for prose):
the size is checked before any pattern runs. A longer text is refused whole as a wall
(`judge`, `prose_sentences`); `redact` scans its first lines up to this size and replaces the
rest by one marker, so a huge hand-written note reaches an agent cut, never unjudged."""
_SHELL_FENCES = frozenset(
    {"sh", "bash", "zsh", "shell", "console", "powershell", "ps1", "cmd", "bat"}
)
_INLINE_CODE = lazy(r"(?<!`)`+([^`]+)`+")
_WORD = lazy(r"[^\W\d_]{2,}")
_LETTER = lazy(r"[^\W\d_]")
EXAMPLE_AFTER_LETTERS = 6  # prose after a quoted example: it is part of a sentence, not its end
MENTION_WORDS = 4  # words of prose around a code span that make it a mention, not a command
# Commands refused even when a sentence only mentions them: they fetch and run code, destroy
# data or a disk, or take over an account, a shell or the machine's start-up.
_DANGEROUS = lazy(
    "|".join(
        (
            r"\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\|\s*(?:iex|invoke-expression|python3?|perl|ruby)\b",
            r"\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r|\bmkfs\.|\bdd\s+if=|\bshred\b|:\(\)\s*\{",
            r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n]*\bhttps?://|/dev/tcp/|\b(?:nc|ncat|netcat)\b",
            r"\b(?:powershell|pwsh)(?:\.exe)?\b[^\n]*-(?:enc|e\b|encodedcommand)|\b(?:iex|mshta|certutil|bitsadmin|rundll32|regsvr32)\b",
            r"\b(?:chpasswd|usermod|useradd|passwd|visudo|crontab|schtasks|iptables|ufw|set-executionpolicy)\b",
            r"\bchmod\s+(?:-r\s+)?[0-7]*7[0-7]*\s+/|\bchmod\s+\+s\b|>>?\s*~?/[\w./-]*(?:\.ssh|bashrc|profile|authorized_keys|sudoers|cron)",
            r"\bbase64\s+-d\b|\beval\b|\bexec\b|\bnohup\b|\$\([^)]+\)",
            r"\bsudo\b[^\n]*\b(?:purge|remove|erase|autoremove|rm|del|delete|format|kill(?:all)?|shutdown|reboot)\b",
            r"\b(?:kubectl|helm|terraform|docker|podman)\b[^\n]*\b(?:delete|destroy|uninstall|prune|rmi?)\b",
            r"\b(?:delete|destroy|drop|prune|purge|wipe)\b[^\n]*\s--(?:force|yes|all)\b",
        )
    )
)
_MARKER = lazy(r"^(\s*(?:(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|>\s*)*(?:#{1,6}\s+)?)")


@dataclass(frozen=True)
class Verdict:
    """What the gate found in a text: no reasons means it may pass."""

    reasons: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.reasons

    def why(self) -> str:
        """'it contains a credential or secret and a shell command'."""
        parts = [_WHAT[r] for r in self.reasons]
        if not parts:
            return "nothing refused"
        joined = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        return f"it contains {joined}"


# -- one sentence, one line ----------------------------------------------------------------
def _secret_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in patterns.SECRET.finditer(text)]
    spans += [
        m.span("value")
        for m in patterns.PASSWORD_IN_PROSE.finditer(text)
        if patterns.looks_like_password(m["value"])
    ]
    spans += [
        m.span("value")
        for m in patterns.PASSWORD_NAMED.finditer(text)
        if patterns.looks_like_password(m[1])
    ]
    spans += patterns.high_entropy_tokens(text)
    spans = [
        (a, b)
        for a, b in spans
        if not patterns.placeholder(text[a:b]) and not patterns.published(text, a, b)
    ]
    return spans + patterns.seed_phrase_spans(text)


def may_hold_secret(text: str) -> bool:
    """Whether any secret detector fires anywhere in `text`, read whole: when none does, no
    sentence, line or block of it is refused as a secret (a cheap first look for callers that
    redact secrets only)."""
    cleaned = clean(text)
    return bool(_secret_spans(cleaned)) or _spaced_secret(cleaned) or "PRIVATE KEY" in text


def holds_secret(text: str) -> bool:
    """Whether a line of code or a command holds a credential shaped as one (a provider key,
    a named password, a random-looking token, a recovery phrase, a key spelled out): the
    "code is ..." and "key: value" of prose read otherwise in code."""
    cleaned = clean(text)
    named = (
        m for m in patterns.PASSWORD_NAMED.finditer(cleaned) if patterns.looks_like_password(m[1])
    )
    given = (
        m.group(0)
        for m in patterns.SECRET.finditer(cleaned)
        if not patterns.placeholder(m.group(0))
    )
    random = (
        a
        for a, b in patterns.high_entropy_tokens(cleaned)
        if not patterns.placeholder(cleaned[a:b])
    )
    return bool(
        next(given, None)
        or next(named, None)
        or next(random, None) is not None
        or patterns.seed_phrase_spans(cleaned)
        or _spaced_secret(cleaned)
    )


def _spaced_secret(text: str) -> bool:
    """A key spelled out with spaces ("A K I A 4 Q ...", "s k - p r o j - 8 f 3 K")."""
    joined = normalize.despace(text)
    return joined != text and bool(_secret_spans(re.sub(r"\s*([-_])\s*", r"\1", joined)))


def _injection(folded: str) -> bool:
    return _speaks_to_assistant(folded) and not _quoted_example(folded)


def _speaks_to_assistant(folded: str) -> bool:
    return bool(_ADDRESSED.search(folded) or patterns.SPLIT.search(normalize.squash(folded)))


def _quoted_example(folded: str) -> bool:
    """An instruction mentioned, not given: quoted as an example of what attacks say ("text
    such as 'ignore previous instructions' is hidden in web pages", "「以前の指示を無視せよ」
    といった文"). The instruction is all inside one quotation, introduced by a word that
    marks an example or names a text, with prose after it, and nothing outside the
    quotation speaks to the assistant."""
    if _speaks_to_assistant(patterns.QUOTATION.sub(" ", folded)):
        return False  # (also where there is no quotation at all)
    for quoted in patterns.QUOTATION.finditer(folded):
        before, after = folded[: quoted.start()], folded[quoted.end() :]
        if (
            _speaks_to_assistant(quoted[0])
            and len(_LETTER.findall(after)) >= EXAMPLE_AFTER_LETTERS
            and (patterns.EXAMPLE_BEFORE.search(before) or patterns.EXAMPLE_AFTER.match(after))
        ):
            return True
    return False


# Everything that speaks to the assistant, as one pattern (one pass over a sentence)
_ADDRESSED = lazy(
    patterns.hoisted(*patterns.INJECTION_PARTS, *lexicon.PARTS, *patterns.ROLE_TAG_PARTS)
)


def _exfiltration(folded: str, raw: str) -> bool:
    addressed = _ADDRESS.search(folded)  # (a cheap look first: most sentences have none)
    return bool(
        (addressed and lexicon.SENT_DATA.search(folded) and patterns.TRANSFER_TO.search(folded))
        or (addressed and patterns.EXFILTRATION.search(folded))
        or (patterns.DEFANGED.search(raw.lower()) and patterns.SENDING.search(folded))
    )


_ADDRESS = lazy(
    r"@|://|\d\.\d|\w\.\w+/|webhook|pastebin|gist|ngrok|discord|telegram|slack|whatsapp|signal|#\d"
)


_LINK_TARGET = lazy(r"\]\((?:[^()\s]|\([^()\s]*\))+\)")  # a markdown link's target: a reference


# Words that show a sentence speaks of its writer: such a sentence is the person's own,
# even next to an injection.
_FIRST_PERSON = lazy(
    r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|we|we're|our|us|ich|mein\w*|mir|mich|wir|unser\w*"
    r"|je|j'\w+|moi|mon|ma|mes|nous|notre|nos|yo|mi|mis|nosotros|nuestr\w*)\b"
)


def _sentence_reasons(raw: str) -> tuple[str, ...]:
    """Everything refused in one sentence (cached: summaries and capture judge the same
    sentences; a sentence too long to be one is judged each time, so the cache's size stays
    bounded)."""
    if len(raw) > MAX_SENTENCE_CHARS:
        return _scan_sentence(raw)
    return _cached_reasons(raw)


def _scan_sentence(raw: str) -> tuple[str, ...]:
    folded = normalize.fold(raw)
    reversed_ = normalize.backwards(folded)
    reasons: list[str] = []
    if (
        _injection(folded)
        or (reversed_ and _injection(reversed_))
        or (normalize.disguised(raw) and patterns.SQUASHED.search(normalize.squash(folded)))
        or (normalize.leet(folded) != folded and patterns.INJECTION.search(normalize.leet(folded)))
    ):
        reasons.append("injection")
    linked = normalize.fold(_LINK_TARGET.sub("]", raw)) if "](" in raw else folded
    if _exfiltration(linked, raw) or (reversed_ and _exfiltration(reversed_, raw[::-1])):
        reasons.append("exfiltration")
    if _secret_spans(clean(raw)) or _spaced_secret(clean(raw)):
        reasons.append("secret")
    reasons += _prose_shapes(raw)
    return tuple(dict.fromkeys(reasons))


def _prose_shapes(text: str) -> list[str]:
    """The shapes of a line or sentence and of the code spans in it. A command named in
    prose ("run `git status` first") is a mention, as documentation makes: refused only when
    it is dangerous (it fetches and runs, destroys, or takes over an account or start-up); a
    bare command, or one with hardly any prose around it, is a command."""
    spans = _INLINE_CODE.findall(text)
    prose = _INLINE_CODE.sub(" ", text) if spans else text
    shapes = [_shape(prose)]
    mentioned = len(_WORD.findall(prose)) >= MENTION_WORDS
    for code in spans:
        kind = _shape(code)
        if kind == "command" and mentioned and not _DANGEROUS.search(normalize.fold(code)):
            continue
        shapes.append(kind)
    return [shape for shape in shapes if shape]


_cached_reasons = lru_cache(maxsize=4096)(_scan_sentence)


def _shape(text: str) -> str | None:
    """Command, tool output, role tag or code recognised by the shape of a line or sentence."""
    folded = normalize.fold(text, keep_spacing=True).strip()
    if not folded:
        return None
    if patterns.COMMAND_START.search(folded) or patterns.COMMAND_ANYWHERE.search(folded):
        return "command"
    if patterns.TOOL_START.search(folded) or patterns.TOOL_ANYWHERE.search(folded):
        return "tool_output"
    if patterns.ROLE_TAG.search(folded):
        return "injection"
    if (
        patterns.CODE_START.search(folded)
        or patterns.CODE_ANYWHERE.search(folded)
        or _symbol_density(folded) > 0.25
    ):
        return "code"
    raw = clean(text)
    return next((reason for reason, pattern in patterns.RAW_SHAPES if pattern.search(raw)), None)


def _weak_code(line: str) -> bool:
    return bool(patterns.WEAK_CODE.search(normalize.fold(line, keep_spacing=True)))


def _symbol_density(text: str) -> float:
    """The share of code punctuation in a line of 12 or more characters."""
    if len(text) < 12:
        return 0.0
    return sum(text.count(c) for c in "{}()[];=<>$|\\") / len(text)


# -- blocks --------------------------------------------------------------------------------
@dataclass
class _Piece:
    """A span of the source: whole lines (`sentence` None) or one sentence of a line."""

    first: int
    last: int  # exclusive
    reasons: tuple[str, ...]
    sentence: str | None = None


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt  # lazy: ~20 ms, only for multi-line text

    return MarkdownIt("commonmark")


def _blocks(text: str) -> Iterator[tuple[str, int, int, str]]:
    """(kind, first line, last line exclusive, content) for each block of `text`: kind is
    code, html or prose."""
    if "\n" not in text and "`" not in text and "<" not in text and not text.startswith("    "):
        yield "prose", 0, 1, text  # one plain line: nothing to parse
        return
    for token in _markdown().parse(text):
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block"):
            info = token.info.strip().split(" ")[0].lower() if token.info else ""
            yield ("command" if info in _SHELL_FENCES else "code"), first, last, token.content
        elif token.type == "html_block":
            yield "html", first, last, token.content
        elif token.type == "inline":
            yield "prose", first, last, token.content


def _pieces(text: str) -> Iterator[_Piece]:
    """Every block, line and sentence of `text` with what the gate found in it."""
    for kind, first, last, content in _blocks(text):
        if kind in ("code", "command"):
            yield _Piece(first, last, (kind,))
            continue
        if kind == "html":
            reason = "injection" if patterns.ROLE_TAG.search(normalize.fold(content)) else "code"
            yield _Piece(first, last, (reason,))
            continue
        lines = content.split("\n")
        shapes = [next(iter(_prose_shapes(line)), None) for line in lines]
        weak = [not shape and _weak_code(line) for line, shape in zip(lines, shapes, strict=True)]
        coded = sum(1 for shape, w in zip(shapes, weak, strict=True) if shape or w)
        if coded >= 2 and coded * 2 >= len(lines) and (any(shapes) or coded >= 3):
            reason = Counter(s for s in shapes if s).most_common(1)[0][0] if any(shapes) else "code"
            yield _Piece(first, last, (reason,))
            continue
        if any("-----BEGIN" in line and "PRIVATE KEY" in line for line in lines):
            yield _Piece(first, last, ("secret",))
            continue
        if len(lines) >= 4 and sum(len(line.split()) <= 2 for line in lines) * 4 >= len(lines) * 3:
            joined = _sentence_reasons(" ".join(line.strip() for line in lines))
            if joined:  # a sentence cut into a word or two a line
                yield _Piece(first, last, joined[:1])
                continue
        judged = [
            [_Piece(first + n, first + n + 1, (shape,))]
            if shape
            else list(_line_sentences(line, first + n))
            for n, (line, shape) in enumerate(zip(lines, shapes, strict=True))
        ]
        hyphenated = _attack_across_lines(content, judged)
        if hyphenated:  # words hyphenated across lines hid an attack from each line
            yield _Piece(first, last, hyphenated)
            continue
        for n, pieces in enumerate(judged):
            # a line shaped like code next to a refused line belongs to it (a tool's
            # "Result: ..." after its call, a YAML key after a command)
            near = [
                p.reasons[0]
                for m in (n - 1, n + 1)
                if 0 <= m < len(judged)
                for p in judged[m]
                if p.reasons
            ]
            if weak[n] and near:
                pieces = [_Piece(first + n, first + n + 1, (near[0],))]
            yield from pieces


def _attack_across_lines(content: str, judged: list[list[_Piece]]) -> tuple[str, ...]:
    """The attack of a block whose words are hyphenated at line ends ("summa-\nrising"), read
    with the words joined, where no line alone shows one; () otherwise."""
    joined = normalize.unhyphenate(content)
    if joined == content or any(
        r in _ATTACKS for pieces in judged for p in pieces for r in p.reasons
    ):
        return ()
    joined = joined.replace("\n", " ")
    found = {r for p in _line_sentences(joined, 0) for r in p.reasons if r in _ATTACKS}
    return tuple(r for r in _ATTACKS if r in found)


_ATTACKS = ("injection", "exfiltration")


def _line_sentences(line: str, row: int) -> Iterator[_Piece]:
    """The sentences of one prose line. An instruction to the assistant taints the line: the
    sentences around it that do not speak of the writer are refused with it (an attack is
    rarely one sentence long)."""
    sentences = split_sentences(line.strip())
    judged = [_sentence_reasons(s) for s in sentences]
    attack = any(r in ("injection", "exfiltration") for reasons in judged for r in reasons)
    for sentence, reasons in zip(sentences, judged, strict=True):
        if attack and not reasons and not _FIRST_PERSON.search(normalize.fold(sentence)):
            reasons = ("injection",)
        if len(sentence) > MAX_SENTENCE_CHARS:
            reasons = (*reasons, "wall")
        yield _Piece(row, row + 1, reasons, sentence)


# -- the three ways in ---------------------------------------------------------------------
def prose_sentences(content: str) -> tuple[list[str], Counter[str]]:
    """The prose sentences of a message that may become memory, in order and cleaned, and
    how many pieces were refused, by reason."""
    kept: list[str] = []
    refused: Counter[str] = Counter()
    if len(content) > MAX_SCAN_CHARS:
        return kept, Counter({"wall": 1})
    for piece in _pieces(content):
        if piece.reasons:
            refused[piece.reasons[0]] += 1
        elif piece.sentence is not None:
            kept.append(clean(piece.sentence))
    return kept, refused


def judge(text: str, *, min_words: int = 0, max_chars: int | None = None) -> Verdict:
    """Whether `text` may be stored as (or in) a memory: every reason it may not. A text over
    `MAX_SCAN_CHARS` is a wall, refused before any scan."""
    if len(text) > MAX_SCAN_CHARS:
        return Verdict(("wall",))
    reasons: dict[str, None] = {}
    for piece in _pieces(text):
        reasons.update(dict.fromkeys(piece.reasons))
    if min_words and len(re.findall(r"\w+", text)) < min_words:
        reasons["fragment"] = None
    if max_chars is not None and len(text) > max_chars:
        reasons["wall"] = None
    return Verdict(tuple(r for r in REASONS if r in reasons))


def redact(text: str) -> tuple[str, Counter[str]]:
    """`text` with every refused part replaced by a marker (`[redacted: credential]`):
    a secret inside a sentence by itself, any other refused sentence, line or block whole.
    Returns the text and what was redacted, by reason. Of a text over `MAX_SCAN_CHARS`, the
    lines that fit are redacted and the rest is one marker (`[redacted: text]`)."""
    if len(text) > MAX_SCAN_CHARS:
        head, in_head = redact(text[: _cut(text, MAX_SCAN_CHARS)])
        in_head["wall"] += 1
        return f"{head}\n{_marker('wall')}".lstrip("\n"), in_head
    source = text.split("\n")
    lines: list[str | None] = list(source)
    found: Counter[str] = Counter()
    by_line: dict[int, list[_Piece]] = {}
    for piece in _pieces(text):
        if piece.sentence is None:
            if piece.reasons:
                found[piece.reasons[0]] += 1
                lines[piece.first] = _marker(piece.reasons[0])
                for row in range(piece.first + 1, piece.last):
                    lines[row] = None
            continue
        by_line.setdefault(piece.first, []).append(piece)
    for row, pieces in by_line.items():
        if not any(p.reasons for p in pieces) or lines[row] is None:
            continue
        parts = []
        for piece in pieces:
            sentence = piece.sentence or ""
            if piece.reasons:
                sentence, reasons = _without_secrets(sentence, piece.reasons)
                found.update(piece.reasons[:1])
                if reasons:
                    sentence = _marker(reasons[0])
            parts.append(sentence)
        prefix = _MARKER.match(source[row])
        lines[row] = (prefix.group(1) if prefix else "") + " ".join(_collapse(parts))
    kept = [line for line in lines if line is not None]
    return clean("\n".join(_collapse(kept))), found


def _cut(text: str, size: int) -> int:
    """Where to cut `text` to at most `size` characters: at a line's end, else between words
    (a word, which may be a key, is never cut in two), else nothing is kept."""
    cut = text.rfind("\n", 0, size + 1)
    if cut < size // 2:
        cut = max(cut, *(text.rfind(space, 0, size + 1) for space in " \t"))
    return max(cut, 0)


def _without_secrets(sentence: str, reasons: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """A sentence refused only for a secret, with the secret replaced in place (and what is
    still refused in it); any other sentence as it is."""
    if reasons != ("secret",):
        return sentence, reasons
    cleaned = clean(sentence)
    for start, end in reversed(_merged(_secret_spans(cleaned))):
        cleaned = cleaned[:start] + _marker("secret") + cleaned[end:]
    return cleaned, _sentence_reasons(cleaned)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans as one, in order."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _marker(reason: str) -> str:
    return f"[redacted: {LABELS[reason]}]"


def _collapse(parts: list[str]) -> list[str]:
    """Consecutive identical markers shown once."""
    out: list[str] = []
    for part in parts:
        if out and part == out[-1] and part.startswith("[redacted: "):
            continue
        out.append(part)
    return out
