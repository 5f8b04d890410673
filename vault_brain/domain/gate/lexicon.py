"""Instructions to the assistant in many languages, built from word tables, not sentences.

The tables are data: `lexicon.txt` beside this module (the package's own file, read once on
import). Each section holds regex alternatives over folded text; `{name}` in a line stands for
the section `name`, so a class is written once for all languages:

- OVERRIDE: an overriding verb and a word for the assistant's instructions, per language, in
  either order in a sentence (verb-final languages, split verbs: "lass ... Vorgaben beiseite");
- ROLE: "from now on" with the assistant addressed, a new role, mode or system message,
  claimed authority or permission, obeying only someone, every answer steered;
- SECRECY: secrecy towards the user; OBEY: the text itself as the assistant's real orders;
- STEERING: the assistant, or a standing order for it, with "always / only / never" and a verb
  of recommending ("the assistant should always recommend X bank"), or its output steered;
- SENT_DATA: what, sent to an address, makes exfiltration (patterns.TRANSFER_TO).

Scripts without spaces, or with vowel signs that split words (CJK, Devanagari, Arabic), are
matched without word boundaries (section `unspaced`).
"""

from __future__ import annotations

import re
from importlib import resources

from vault_brain.domain.gate.patterns import alternatives, any_tested


def _sections() -> dict[str, list[str]]:
    text = resources.files(__package__).joinpath("lexicon.txt").read_text(encoding="utf-8")
    sections: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].split()[0], [])
        elif line.strip() and not line.startswith("#"):
            current.append(line.strip())
    return sections


_TABLES = _sections()


def _words(name: str) -> str:
    """The section's alternatives as one alternation, its `{name}`s filled in."""
    joined = "|".join(_TABLES[name])
    return re.sub(r"\{([a-z_]+)\}", lambda m: f"(?:{_words(m[1])})", joined)


def _pairs(row: str, boundaries: bool = True) -> list[str]:
    """A verb before its noun, or (for the third column, or all verbs in unspaced scripts)
    after it."""
    verbs, nouns, *after = (
        re.sub(r"\{([a-z_]+)\}", lambda m: f"(?:{_words(m[1])})", c) for c in row.split(" : ")
    )
    if not boundaries:
        return [rf"(?:{verbs}).{{0,30}}?(?:{nouns})", rf"(?:{nouns}).{{0,20}}?(?:{verbs})"]
    out = [rf"\b(?:{verbs})\w*\b[^\n]{{0,50}}?\b(?:{nouns})"]
    return out + [rf"\b(?:{nouns})\w*\b[^\n]{{0,30}}?\b(?:{a})\b" for a in after]


OVERRIDE_PARTS = [
    *[p for row in _TABLES["override"] for p in _pairs(row.split(":", 1)[1].strip())],
    *[p for row in _TABLES["unspaced"] for p in _pairs(row, boundaries=False)],
]
ROLE_PARTS, SECRECY_PARTS, OBEY_PARTS, STEERING_PARTS = (
    alternatives(_words(name)) for name in ("role", "secrecy", "obey", "steering")
)
PARTS = OVERRIDE_PARTS + ROLE_PARTS + SECRECY_PARTS + OBEY_PARTS + STEERING_PARTS
SENT_DATA = any_tested(*alternatives(_words("sent_data")))
