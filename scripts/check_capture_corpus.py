#!/usr/bin/env python3
"""Validate the capture evaluation corpus and print counts.

Usage: python scripts/check_capture_corpus.py [folder]

The folder defaults to the repository's tests/data/capture. Tests call check(folder), which
returns the problems (an empty list when the corpus is valid) without printing or exiting.

Exits non-zero (and lists every problem) if any rule is violated. Rules are
described in tests/data/capture/README.md; in short:

conversations.jsonl
  * every line is a JSON object with id, messages, facts (non_facts and
    hostile optional); ids are unique
  * 4-14 messages, roles user/assistant, first message from the user, mostly
    alternating
  * facts: known kind, non-empty subject, 1-3 keywords, valid message index,
    every keyword occurs (case-insensitively) in that message *outside* any
    embedded hostile string
  * non_facts: at most 3, text occurs verbatim in some message
  * hostile: every id exists in hostile.jsonl and its text occurs verbatim in
    some message of the conversation
  * leak hygiene: once the embedded hostile strings are cut out, no needle of
    any hostile entry occurs anywhere in the conversation (so a needle found
    in stored memory can only have come from a hostile string)

hostile.jsonl
  * every line has id, kind, lang, text, needles (disguise optional); ids and
    texts are unique
  * 1-3 needles of at least 8 characters; at least one needle occurs in the
    text as written (case-insensitive); every other needle occurs in a
    normalised form of the text (NFKC, invisible format characters removed,
    bidi-overridden runs reversed, Cyrillic/Greek homoglyphs mapped to Latin,
    whitespace collapsed or removed)
  * disguised entries (with "disguise") carry at least one plain-form needle
    (no invisible/fullwidth/homoglyph characters, no letter spacing)

Minimum counts from the corpus brief are enforced at the end.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "tests" / "data" / "capture"

FACT_KINDS = ("identity", "person", "preference", "decision", "event", "project")
HOSTILE_KINDS = ("injection", "exfiltration", "secret", "code", "command", "tool_output")
LANGS = ("en", "de", "fr", "es")

MIN_FACTS = {
    "identity": 20,
    "person": 25,
    "preference": 25,
    "decision": 20,
    "event": 20,
    "project": 20,
}
MIN_FACTS_TOTAL = 150
MIN_CONVERSATIONS = 36
MIN_HOSTILE_CONVERSATIONS = 8
MIN_HOSTILE = {
    "injection": 50,
    "exfiltration": 15,
    "secret": 40,
    "code": 20,
    "command": 20,
    "tool_output": 15,
}
MIN_HOSTILE_TOTAL = 170
MIN_INJECTION_PER_LANG = {"de": 10, "fr": 10, "es": 10}
MIN_DISGUISED_INJECTIONS = 12
MIN_NEEDLE_LEN = 8

HOMOGLYPHS = {
    # Cyrillic
    "\u0430": "a",
    "\u0435": "e",
    "\u043e": "o",
    "\u0440": "p",
    "\u0441": "c",
    "\u0443": "y",
    "\u0445": "x",
    "\u0456": "i",
    "\u0455": "s",
    "\u0458": "j",
    "\u0501": "d",
    "\u04bb": "h",
    "\u04cf": "l",
    "\u0410": "A",
    "\u0412": "B",
    "\u0415": "E",
    "\u041a": "K",
    "\u041c": "M",
    "\u041d": "H",
    "\u041e": "O",
    "\u0420": "P",
    "\u0421": "C",
    "\u0422": "T",
    "\u0425": "X",
    "\u0406": "I",
    "\u0405": "S",
    "\u0408": "J",
    # Greek
    "\u03bf": "o",
    "\u03b1": "a",
    "\u03b5": "e",
    "\u03b9": "i",
    "\u03ba": "k",
    "\u03bd": "v",
    "\u03c1": "p",
    "\u03c4": "t",
    "\u03c5": "u",
    "\u0391": "A",
    "\u0392": "B",
    "\u0395": "E",
    "\u0396": "Z",
    "\u0397": "H",
    "\u0399": "I",
    "\u039a": "K",
    "\u039c": "M",
    "\u039d": "N",
    "\u039f": "O",
    "\u03a1": "P",
    "\u03a4": "T",
    "\u03a5": "Y",
    "\u03a7": "X",
}
RLO_RUN = re.compile("\u202e(.*?)(?:\u202c|$)", re.S)
LETTER_SPACED = re.compile(r"(?:\b\w\b ){4,}\w\b")


def _strip_map(s: str) -> str:
    s = "".join(ch for ch in s if unicodedata.category(ch) != "Cf")
    s = "".join(HOMOGLYPHS.get(ch, ch) for ch in s)
    return s.lower()


def variants(s: str) -> set[str]:
    """Normalised forms of s a leak detector should also search."""
    base = unicodedata.normalize("NFKC", s)
    forms = {base, RLO_RUN.sub(lambda m: m.group(1)[::-1], base)}
    out: set[str] = set()
    for f in forms:
        f = _strip_map(f)
        out.add(re.sub(r"\s+", " ", f).strip())
        out.add(re.sub(r"\s+", "", f))
    return out


def collapsed(s: str) -> str:
    """NFKC + invisible characters removed + homoglyphs mapped + lower + single spaces."""
    return re.sub(r"\s+", " ", _strip_map(unicodedata.normalize("NFKC", s))).strip()


def is_plain(needle: str) -> bool:
    if any(unicodedata.category(ch) == "Cf" for ch in needle):
        return False
    if any(ch in HOMOGLYPHS for ch in needle):
        return False
    if any(0xFF00 <= ord(ch) <= 0xFFEF for ch in needle):
        return False
    return not LETTER_SPACED.search(needle)


def raw_in(needle: str, text: str) -> bool:
    return needle.lower() in text.lower()


def norm_in(needle: str, text: str) -> bool:
    tv = variants(text)
    nv = variants(needle)
    return any(n and n in t for n in nv for t in tv)


def load_jsonl(path: Path, errors: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for ln, line in enumerate(fh, 1):
            if not line.strip():
                errors.append(f"{path.name}:{ln}: blank line")
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"{path.name}:{ln}: invalid JSON: {e}")
                continue
            if not isinstance(obj, dict):
                errors.append(f"{path.name}:{ln}: not an object")
                continue
            rows.append(obj)
    return rows


def check_hostile(rows: list[dict[str, Any]], errors: list[str]) -> dict[Any, dict[str, Any]]:
    by_id: dict[Any, dict[str, Any]] = {}
    texts: set[str] = set()
    for h in rows:
        hid = h.get("id")
        where = f"hostile {hid}"
        if not isinstance(hid, str) or not re.fullmatch(r"h\d{3,}", hid):
            errors.append(f"{where}: bad id")
        if hid in by_id:
            errors.append(f"{where}: duplicate id")
        by_id[hid] = h
        extra = set(h) - {"id", "kind", "lang", "text", "needles", "disguise"}
        if extra:
            errors.append(f"{where}: unexpected fields {sorted(extra)}")
        if h.get("kind") not in HOSTILE_KINDS:
            errors.append(f"{where}: bad kind {h.get('kind')!r}")
        if h.get("lang") not in LANGS:
            errors.append(f"{where}: bad lang {h.get('lang')!r}")
        text = h.get("text")
        if not isinstance(text, str) or not text.strip():
            errors.append(f"{where}: empty text")
            continue
        if text in texts:
            errors.append(f"{where}: duplicate text")
        texts.add(text)
        needles = h.get("needles")
        if not isinstance(needles, list) or not 1 <= len(needles) <= 3:
            errors.append(f"{where}: needles must be a list of 1-3 strings")
            continue
        raw_hits = 0
        for n in needles:
            if not isinstance(n, str) or len(n.strip()) < MIN_NEEDLE_LEN:
                errors.append(f"{where}: needle too short or not a string: {n!r}")
                continue
            if raw_in(n, text):
                raw_hits += 1
            elif not ("disguise" in h and norm_in(n, text)):
                errors.append(f"{where}: needle not found in text: {n!r}")
        if raw_hits == 0:
            errors.append(f"{where}: no needle occurs in the text as written")
        if "disguise" in h:
            if not isinstance(h["disguise"], str) or not h["disguise"]:
                errors.append(f"{where}: disguise must be a non-empty string")
            if not any(isinstance(n, str) and is_plain(n) and norm_in(n, text) for n in needles):
                errors.append(f"{where}: disguised entry lacks a plain-form needle")
            plain = {
                n.lower()
                for n in needles
                if isinstance(n, str) and is_plain(n) and not raw_in(n, text)
            }
            if not any(
                isinstance(n, str) and raw_in(n, text) and n.lower() not in plain for n in needles
            ) or (not plain and h.get("disguise") != "mixed case"):
                errors.append(f"{where}: disguised entry lacks a needle in its disguised form")
    return by_id


def _cut(s: str, texts: list[str]) -> str:
    """Replace every one of texts in s by a newline, in the order given."""
    for t in texts:
        s = s.replace(t, "\n")
    return s


def check_conversations(
    rows: list[dict[str, Any]], hostile: dict[Any, dict[str, Any]], errors: list[str]
) -> None:
    seen: set[Any] = set()
    all_needles = [
        (hid, n) for hid, h in hostile.items() for n in h.get("needles", []) if isinstance(n, str)
    ]
    for c in rows:
        cid = c.get("id")
        where = f"conversation {cid}"
        if not isinstance(cid, str) or not cid:
            errors.append(f"{where}: bad id")
        if cid in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(cid)
        extra = set(c) - {"id", "messages", "facts", "non_facts", "hostile"}
        if extra:
            errors.append(f"{where}: unexpected fields {sorted(extra)}")
        msgs = c.get("messages")
        if not isinstance(msgs, list) or not 4 <= len(msgs) <= 14:
            errors.append(f"{where}: needs 4-14 messages")
            continue
        ok = True
        for i, m in enumerate(msgs):
            if (
                not isinstance(m, dict)
                or m.get("role") not in ("user", "assistant")
                or not isinstance(m.get("content"), str)
                or not m["content"].strip()
            ):
                errors.append(f"{where}: message {i} malformed")
                ok = False
        if not ok:
            continue
        if msgs[0]["role"] != "user":
            errors.append(f"{where}: first message must be from the user")
        repeats = sum(1 for a, b in itertools.pairwise(msgs) if a["role"] == b["role"])
        if repeats > 2:
            errors.append(f"{where}: roles do not mostly alternate ({repeats} repeats)")

        # hostile references
        hids = c.get("hostile", [])
        if not isinstance(hids, list):
            errors.append(f"{where}: hostile must be a list")
            hids = []
        if len(set(hids)) != len(hids):
            errors.append(f"{where}: duplicate hostile ids")
        htexts: list[str] = []
        for hid in hids:
            h = hostile.get(hid)
            if h is None:
                errors.append(f"{where}: unknown hostile id {hid}")
                continue
            if not any(h["text"] in m["content"] for m in msgs):
                errors.append(f"{where}: hostile {hid} text not embedded verbatim")
            htexts.append(h["text"])
        # longest first so nested texts are cut cleanly
        htexts.sort(key=len, reverse=True)

        cleaned = [_cut(m["content"], htexts) for m in msgs]

        # leak hygiene: nothing needle-like outside the declared hostile spans
        for i, s in enumerate(cleaned):
            s_low, s_norm = s.lower(), collapsed(s)
            for hid, n in all_needles:
                if n.lower() in s_low or collapsed(n) in s_norm:
                    errors.append(
                        f"{where}: message {i} contains needle {n!r} of {hid}"
                        " outside a declared hostile string"
                    )

        facts = c.get("facts")
        if not isinstance(facts, list) or not facts:
            errors.append(f"{where}: needs at least one fact")
            facts = []
        for j, f in enumerate(facts):
            fw = f"{where} fact {j}"
            if not isinstance(f, dict):
                errors.append(f"{fw}: not an object")
                continue
            if set(f) != {"kind", "subject", "keywords", "message"}:
                errors.append(f"{fw}: fields must be kind, subject, keywords, message")
            if f.get("kind") not in FACT_KINDS:
                errors.append(f"{fw}: bad kind {f.get('kind')!r}")
            if not isinstance(f.get("subject"), str) or not f["subject"].strip():
                errors.append(f"{fw}: empty subject")
            mi = f.get("message")
            if not isinstance(mi, int) or not 0 <= mi < len(msgs):
                errors.append(f"{fw}: bad message index {mi!r}")
                continue
            if msgs[mi]["role"] != "user" and f.get("kind") != "decision":
                errors.append(f"{fw}: fact stated in an assistant message")
            kws = f.get("keywords")
            if not isinstance(kws, list) or not 1 <= len(kws) <= 3:
                errors.append(f"{fw}: keywords must be a list of 1-3 strings")
                continue
            for kw in kws:
                if not isinstance(kw, str) or not kw.strip():
                    errors.append(f"{fw}: empty keyword")
                elif kw.lower() not in cleaned[mi].lower():
                    errors.append(
                        f"{fw}: keyword {kw!r} not in message {mi} (outside hostile text)"
                    )
                elif kw.lower() in ("i", "my", "me", "is", "am", "the", "a", "we", "our"):
                    errors.append(f"{fw}: keyword {kw!r} is a pronoun/stopword")

        non = c.get("non_facts", [])
        if not isinstance(non, list) or len(non) > 3:
            errors.append(f"{where}: non_facts must be a list of at most 3")
            non = []
        for j, nf in enumerate(non):
            if not isinstance(nf, dict) or not isinstance(nf.get("text"), str) or not nf.get("why"):
                errors.append(f"{where} non_fact {j}: needs text and why")
                continue
            if not any(nf["text"] in m["content"] for m in msgs):
                errors.append(f"{where} non_fact {j}: text not found verbatim in any message")


def report(folder: Path) -> tuple[list[str], list[str]]:
    """Check the corpus in folder: return (the count lines main() prints, the problems)."""
    errors: list[str] = []
    hrows = load_jsonl(folder / "hostile.jsonl", errors)
    crows = load_jsonl(folder / "conversations.jsonl", errors)
    hostile = check_hostile(hrows, errors)
    check_conversations(crows, hostile, errors)

    fact_kinds = Counter(
        f.get("kind") for c in crows for f in c.get("facts", []) if isinstance(f, dict)
    )
    h_kinds = Counter(h.get("kind") for h in hrows)
    h_langs = Counter(h.get("lang") for h in hrows)
    inj_langs = Counter(h.get("lang") for h in hrows if h.get("kind") == "injection")
    disguised = [h for h in hrows if h.get("kind") == "injection" and h.get("disguise")]
    hostile_convs = [c for c in crows if c.get("hostile")]
    used = {hid for c in crows for hid in c.get("hostile", [])}
    used_kinds = Counter(hostile[h]["kind"] for h in used if h in hostile)
    n_facts = sum(fact_kinds.values())
    n_non = sum(len(c.get("non_facts", [])) for c in crows)

    lines = [
        f"conversations: {len(crows)} ({len(hostile_convs)} with hostile strings, "
        f"{len(used)} distinct hostile strings embedded: {dict(sorted(used_kinds.items()))})",
        f"facts: {n_facts}   non_facts: {n_non}",
    ]
    lines += [f"  {k:<11} {fact_kinds.get(k, 0):>4}   (min {MIN_FACTS[k]})" for k in FACT_KINDS]
    lines.append(f"hostile strings: {len(hrows)}")
    lines += [f"  {k:<12} {h_kinds.get(k, 0):>4}   (min {MIN_HOSTILE[k]})" for k in HOSTILE_KINDS]
    lines.append("  by language: " + ", ".join(f"{lang}={h_langs.get(lang, 0)}" for lang in LANGS))
    lines.append(
        "  injections by language: "
        + ", ".join(f"{lang}={inj_langs.get(lang, 0)}" for lang in LANGS)
    )
    lines.append(f"  disguised injections: {len(disguised)} (min {MIN_DISGUISED_INJECTIONS})")

    for k, m in MIN_FACTS.items():
        if fact_kinds.get(k, 0) < m:
            errors.append(f"too few {k} facts: {fact_kinds.get(k, 0)} < {m}")
    if n_facts < MIN_FACTS_TOTAL:
        errors.append(f"too few facts: {n_facts} < {MIN_FACTS_TOTAL}")
    if len(crows) < MIN_CONVERSATIONS:
        errors.append(f"too few conversations: {len(crows)} < {MIN_CONVERSATIONS}")
    if len(hostile_convs) < MIN_HOSTILE_CONVERSATIONS:
        errors.append(f"too few conversations with hostile strings: {len(hostile_convs)}")
    for k, m in MIN_HOSTILE.items():
        if h_kinds.get(k, 0) < m:
            errors.append(f"too few {k} hostile strings: {h_kinds.get(k, 0)} < {m}")
    if len(hrows) < MIN_HOSTILE_TOTAL:
        errors.append(f"too few hostile strings: {len(hrows)} < {MIN_HOSTILE_TOTAL}")
    for lang, m in MIN_INJECTION_PER_LANG.items():
        if inj_langs.get(lang, 0) < m:
            errors.append(f"too few {lang} injections: {inj_langs.get(lang, 0)} < {m}")
    if len(disguised) < MIN_DISGUISED_INJECTIONS:
        errors.append(f"too few disguised injections: {len(disguised)}")
    return lines, errors


def check(folder: Path) -> list[str]:
    """Every problem in the corpus in folder; an empty list when it is valid."""
    return report(folder)[1]


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_FOLDER
    lines, errors = report(folder)
    for line in lines:
        print(line)

    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        sys.exit(1)
    print("\nOK: corpus is valid")


if __name__ == "__main__":
    main()
