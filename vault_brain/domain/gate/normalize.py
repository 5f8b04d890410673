"""Text as the gate reads it: disguises taken off before anything is judged.

Hostile text hides from simple rules with invisible characters (zero-width spaces and joiners,
word joiners, soft hyphens), right-to-left overrides that show reversed text, fullwidth or
mathematical letters, Cyrillic and Greek look-alikes, and letters spaced apart. `fold` undoes
all of these into the form the rules are written for (lower case, plain Latin, single spaces);
`clean` removes only what is never wanted in a stored note (invisible characters, reversed runs)
and keeps the text otherwise as written.
"""

from __future__ import annotations

import re
import unicodedata

from vault_brain.domain.lazy_re import lazy

_RLO, _PDF, _LRO = "\u202e", "\u202c", "\u202d"
# Format characters that render as nothing (Unicode category Cf: zero-width space and joiners,
# word joiner, soft hyphen, bidi controls, BOM, tag characters) plus the few invisible letters
# and fillers outside Cf.
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")
_ZWJ = "\u200d"

# Letters that look like Latin ones: Cyrillic and Greek (upper and lower case), and a few
# others. Mathematical and fullwidth letters are already Latin after NFKC.
_HOMOGLYPHS = str.maketrans(
    {
        **dict(
            zip("АВЕКМНОРСТУХЅІЈԁӏаеорсухѕіјһԛԝ", "ABEKMHOPCTYXSIJdlaeopcyxsijhqw", strict=True)
        ),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαειικνορτυχ", "ABEZHIKMNOPTYXaeiikvoptux", strict=True)),
        **dict(zip("ıȷɡℓ", "ijgl", strict=True)),
    }
)
_QUOTES = str.maketrans(dict(zip("‘’‚“”„«»", '\'\'\'"""""', strict=True)))
_SPACED_RUN = lazy(r"(?<![^\W_])(?:[^\W_] ){2,}[^\W_](?![^\W_])")
# Letters spaced apart, words set apart by wider gaps where there are several: "D I S R E G A R D",
# "t o  t h e  A I" (what `despace` joins)
_SPACED_LETTERS = lazy(r"(?<![^\W_])[^\W_](?: {1,3}[^\W_]){2,}(?![^\W_])")
_GAP = lazy(r" {2,}")
_DOTTED_RUN = lazy(r"(?<![^\W_])(?:[^\W_][.·•_\-]){2,}[^\W_](?![^\W_])")
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
)
_LEET_WORD = lazy(r"\b(?=\w*[a-z])(?=\w*[013457])[\w@$]+\b")
_WHITESPACE = lazy(r"\s+")
# Defanged addresses: hxxp, [.] (dot) {at}, "name at host dot example", "evil . example".
_DEFANG = (
    (lazy(r"\bhxxp"), "http"),
    (lazy(r"\s*[\[({]\s*(?:\.|dot|punkt|point|punto|ponto|kropka|точка)\s*[\])}]\s*"), "."),
    (lazy(r"\s*[\[({]\s*(?:at|@|arobase|arroba|собака)\s*[\])}]\s*"), "@"),
    (lazy(r"\s*:\s*/\s*/\s*"), "://"),
    (lazy(r"(?<=\w) \. (?=\w)"), "."),
    (
        lazy(
            r"\b([\w.+-]+) (?:at|arobase|arroba|собака) ([\w-]+) (?:dot|punkt|point|punto|ponto"
            r"|kropka|точка) (\w+)\b"
        ),
        r"\1@\2.\3",
    ),
)


def _invisible(ch: str) -> bool:
    return ch in _INVISIBLE_EXTRA or (unicodedata.category(ch) == "Cf" and ch != _ZWJ)


def _unreverse(text: str) -> str:
    """Text inside a right-to-left override is shown reversed: put it in reading order."""
    if _RLO not in text:
        return text
    out: list[str] = []
    run: list[str] | None = None
    for ch in text:
        if ch == _RLO:
            run = []
        elif run is not None and ch in (_PDF, _LRO, "\n"):
            out.extend(reversed(run))
            run = None
            if ch == "\n":
                out.append(ch)
        elif run is not None:
            run.append(ch)
        else:
            out.append(ch)
    if run is not None:
        out.extend(reversed(run))
    return "".join(out)


def _drop_invisible(text: str) -> str:
    if text.isascii() or not any(_invisible(ch) or ch == _ZWJ for ch in set(text)):
        return text  # nothing to drop (most text): one look at each distinct character
    out = []
    for i, ch in enumerate(text):
        if _invisible(ch):
            continue
        if ch == _ZWJ:  # kept only inside emoji sequences, where it is a real joiner
            before = text[i - 1] if i else ""
            after = text[i + 1] if i + 1 < len(text) else ""
            if not (before and after and not before.isalnum() and not after.isalnum()):
                continue
        out.append(ch)
    return "".join(out)


def disguised(text: str) -> bool:
    """True if `text` carries something that hides words: invisible characters, a reversal,
    compatibility letters (fullwidth, mathematical), look-alikes, spaced-out letters or words
    hyphenated across lines."""
    if not text.isascii() and any(_invisible(ch) for ch in set(text)):
        return True
    if unicodedata.normalize("NFKC", text) != unicodedata.normalize("NFC", text):
        return True
    if text.translate(_HOMOGLYPHS) != text and _mixes_scripts(text):
        return True
    return bool(_SPACED_RUN.search(text) or _DOTTED_RUN.search(text) or _HYPHENATED.search(text))


def _mixes_scripts(text: str) -> bool:
    """A word with both Latin and Cyrillic or Greek letters (plain Russian or Greek is not a
    disguise)."""
    for word in re.findall(r"[^\W\d_]+", text):
        latin = any("a" <= ch.lower() <= "z" for ch in word)
        other = any(ord(ch) >= 0x370 and ch.isalpha() for ch in word)
        if latin and other:
            return True
    return False


def _latin(text: str) -> str:
    """Look-alike letters read as Latin: everywhere in Latin text, and in the words that mix
    scripts in other text (plain Russian or Greek stays as written)."""
    if text.isascii() or text.translate(_HOMOGLYPHS) == text:
        return text
    latin = sum("a" <= c <= "z" or "A" <= c <= "Z" for c in text)
    if latin * 2 >= sum(c.isalpha() for c in text):
        return text.translate(_HOMOGLYPHS)
    return _WORD.sub(lambda m: m[0].translate(_HOMOGLYPHS) if _mixes_scripts(m[0]) else m[0], text)


_WORD = lazy(r"[^\W\d_]+")


def clean(text: str) -> str:
    """`text` as it may be stored: reversed runs in reading order, invisible characters gone,
    composed Unicode (NFC). Nothing else changes."""
    return unicodedata.normalize("NFC", _drop_invisible(_unreverse(text)))


def despace(text: str) -> str:
    """'D I S R E G A R D  the rules' -> 'DISREGARD the rules' (a double space still
    separates words, and short words are joined too: 't o  t h e  A I' -> 'to the AI');
    'i.g.n.o.r.e y.o.u.r' -> 'ignore your'."""
    text = _DOTTED_RUN.sub(lambda m: re.sub(r"[.·•_\-]", "", m.group(0)), text)
    return _SPACED_LETTERS.sub(
        lambda m: " ".join(word.replace(" ", "") for word in _GAP.split(m.group(0))), text
    )


def _plain(text: str) -> str:
    """Cleaned, NFKC (fullwidth and mathematical letters to plain ones), look-alikes to Latin,
    typographic quotes to plain ones."""
    return _latin(unicodedata.normalize("NFKC", clean(text))).translate(_QUOTES)


def unhyphenate(text: str) -> str:
    """Words hyphenated at a line's end joined again: 'summa-\nrising' -> 'summarising'."""
    return _HYPHENATED.sub("", text)


_HYPHENATED = lazy(r"(?<=\w)-\n(?=[^\W\d_])")


def _joined(text: str) -> str:
    """Spaced letters and hyphenated words joined, single spaces, defanged addresses restored."""
    text = _WHITESPACE.sub(" ", despace(unhyphenate(text))).strip()
    for pattern, plain in _DEFANG:
        text = pattern.sub(plain, text)
    return text


def fold(text: str, keep_spacing: bool = False) -> str:
    """The form the rules read: `_plain`, lower case, and (unless `keep_spacing`, for rules
    about indentation and columns) spaced letters joined and single spaces."""
    text = _plain(text).lower()
    return text if keep_spacing else _joined(text)


def readable(text: str) -> str:
    """A disguised text as a person reads it (`fold`'s steps, case kept): what a model that
    reads meaning is shown. Text with no disguise is returned as it is."""
    return _joined(_plain(text)) if disguised(text) else text


def backwards(folded: str) -> str:
    """A sentence written backwards, in reading order ("" if it is not): all of it, when more
    common words read right to left; else its words written backwards, when two or more of
    them are common or the gate's words ("erongi lla suoiverp selur")."""
    words = re.findall(r"\w+", folded)
    ahead = sum(w in _COMMON for w in words)
    if sum(w[::-1] in _COMMON for w in words) > max(ahead, 1):
        return folded[::-1]
    turned = [w for w in words if w not in _COMMON | _ATTACK and w[::-1] in _COMMON | _ATTACK]
    if len(turned) < 2 or not any(w[::-1] in _ATTACK for w in turned):
        return ""
    return _WORD_CHARS.sub(lambda m: m[0][::-1] if m[0] in turned else m[0], folded)


_WORD_CHARS = lazy(r"\w+")
_ATTACK = frozenset(
    re.findall(r"\w+", "ignore previous prior instructions rules disregard forget prompt system")
)
_COMMON = frozenset(
    re.findall(r"\w+", "the and to you your all of is in do not for this that with me it")
)


def leet(folded: str) -> str:
    """Words that mix letters with look-alike digits read as letters ('1gn0r3' -> 'ignore');
    other words unchanged."""
    return _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), folded)


def squash(folded: str) -> str:
    """Letters and digits only: what is left of a phrase broken up by any separator."""
    return "".join(ch for ch in folded if ch.isalnum())
