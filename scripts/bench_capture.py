#!/usr/bin/env python3
"""Capture quality and memory hygiene on the labelled corpus in tests/data/capture (see its
README.md).

    .venv/bin/python scripts/bench_capture.py --stage capture [--split dev|held-out|all]
                                              [--set corpus|blind|blind2|blind3]
                                              [--verbose] [--json]
    .venv/bin/python scripts/bench_capture.py --stage pipeline [--big] [--keep DIR]
                                              [--verbose] [--json]

Splits: conversations c01..c23 are the development half (rules are written against them),
c24..c46 the held-out half (only measured). `all` is both. `--set blind` and `--set blind2`
score the two sets written later without sight of the rules (blind.jsonl was then used to
tune them; blind2.jsonl, written last, has not been: it is the figure for chat nobody has
seen; blind3.jsonl, written before the rework of issue 23, is its held-out set); --split applies
to the corpus only.

Stage `capture` runs `vault_brain.domain.capture.conversation.capture()` over each
conversation's messages (message ids are "m<index>") and scores its candidates against the labels:

- A labelled fact is recalled when some candidate of the same conversation contains every
  keyword of the fact (case-insensitive substring of the candidate's text) and the subject
  agrees: a fact about "user" needs a candidate whose subject is "user"; a fact about anyone
  or anything else needs a candidate whose subject or text contains that name
  (case-insensitive). The kind and the message index are not compared.
- A candidate is a true positive when its text contains every keyword of at least one
  labelled fact of its conversation; otherwise it is a false positive. Precision = true
  positives / all candidates. The stricter figure that also asks the subject to agree (as
  for recall) is reported beside it as "strict precision".
- Recall is reported by the fact's kind, precision by the candidate's kind, and both overall.
- A `non_facts` text counts as captured when a candidate comes from the message holding it
  and at least 60% of the non-fact's content words (text.content_words) are in the
  candidate's text; there should be about none.
- Hostile strings are the gate's job: the script counts the candidates holding a needle of
  the conversation's hostile entries (case-insensitive, also after the README's
  normalisation: `check_capture_corpus.variants`), without tuning capture for it.

Stage `pipeline` runs every conversation (the `all` split) through a new vault, offline (no
LLM), with the memory API in-process (one `MemoryAPI` for the person, source "cli", one for
an agent, source "mcp", each held as a long-running process holds it), and looks for hostile
needles wherever memory is written or handed to an agent. It exits 1 if it finds any.

- Sessions: the 46 conversations, plus synthetic sessions whose ordinary user turns embed
  every one of the hostile strings (most are in no conversation), several per session, each
  beside a plain fact. The vault's STRATEGY.md lowers `promotion_threshold` and
  `compaction_keep_recent` so that promotion and compaction act on sessions this short.
- Paths, in order: `persist` (the loop's transcript records), `compact_session` (forced; it
  flushes the span it summarises first), `flush`, `vb promote`, `vb consolidate` and
  `vb promote` again (`api.plan` + `api.run`), an agent's `memory_store` and
  `memory_update` (source "mcp": each hostile string in an otherwise plausible memory; a
  refusal is the expected outcome), MEMORY.md, then per session `vb loop intake` + `vb loop
  context`, and last an agent's `memory_search` (a few queries) and `memory_retrieve` (every
  note).
- Destinations scanned: entity notes, episode notes, archive/, MEMORY.md, the compaction
  summaries and the other records vb adds to transcripts (a retrieval's query is the user's
  message, so it is left out), the memory part of each loop context (the system message:
  STRATEGY.md, MEMORY.md, retrieved memories, the summary; the conversation after it is the
  transcript), what agents read, what agents stored, and every other file under the vault.
  Not scanned: the messages of `sessions/*.jsonl` (verbatim records by design), the session
  list that caches them (`sessions/sessions.json`), the search index in `.vb/` and `.git/`.
  A leak is any needle of any hostile entry, case-insensitive, as written or after
  normalisation; there should be none.
- Recall by kind at the end of the pipeline: a labelled fact is recalled when a line of an
  entity note citing the fact's session (flush: "from session <id>, m0003"; promotion: the
  episode's link) contains every keyword, in any entity note for a fact about "user", else in
  a note whose file name or text holds the subject's name. Reported, not a target: routing
  is still moving.
- Gate cost: `gate.prose_sentences` (what capture runs) and `gate.judge` (what a store runs)
  per corpus message. With `--big`, also one offline `flush` of a 200-message session on a
  generated 10,000-note vault (scripts/gen_vault.py; slow to build), target <= 1 s.
  `--keep DIR` builds the vaults in DIR (new or empty) and leaves them there to inspect.

`capture_scores()` and `pipeline_scores()` are importable for tests.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
for folder in (ROOT, SCRIPTS):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import gen_vault  # noqa: E402
from bench_common import add_record_option, messages_of, save_record  # noqa: E402
from check_capture_corpus import variants  # noqa: E402

from vault_brain.app.api import MemoryAPI, create_vault  # noqa: E402
from vault_brain.app.memory.guard import PERSON  # noqa: E402
from vault_brain.app.memory.results import NoteResult  # noqa: E402
from vault_brain.app.sessions.loop import parse_records  # noqa: E402
from vault_brain.domain.capture.conversation import KINDS, Candidate, capture  # noqa: E402
from vault_brain.domain.errors import RefusedError  # noqa: E402
from vault_brain.domain.gate import judge, prose_sentences  # noqa: E402
from vault_brain.domain.sessions.records import MESSAGE_TYPES, record_kind  # noqa: E402
from vault_brain.domain.text import content_words, slugify  # noqa: E402
from vault_brain.storage.env import Environment  # noqa: E402
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter  # noqa: E402
from vault_brain.storage.sessions.transcript import read_records  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "capture"
SPLITS = ("dev", "held-out", "all")
SETS = ("corpus", "blind", "blind2", "blind3")
DEV_LAST = 23  # c01..c23 are the development half
NON_FACT_OVERLAP = 0.6


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_corpus(folder: Path = CORPUS) -> list[dict[str, Any]]:
    """The labelled conversations."""
    return load_jsonl(folder / "conversations.jsonl")


def load_needles(folder: Path = CORPUS) -> dict[str, list[str]]:
    """Hostile id -> its needles."""
    return {row["id"]: list(row["needles"]) for row in load_jsonl(folder / "hostile.jsonl")}


def in_split(conversation: dict[str, Any], split: str) -> bool:
    number = int(re.sub(r"\D", "", conversation["id"]) or 0)
    if split == "dev":
        return number <= DEV_LAST
    if split == "held-out":
        return number > DEV_LAST
    return True


def holds_keywords(fact: dict[str, Any], candidate: Candidate) -> bool:
    """Every keyword of the fact is in the candidate's text (case-insensitive)."""
    text = candidate.text.lower()
    return all(keyword.lower() in text for keyword in fact["keywords"])


def matches(fact: dict[str, Any], candidate: Candidate) -> bool:
    """The recall rule of the module docstring: keywords in the text, subject agreeing."""
    if not holds_keywords(fact, candidate):
        return False
    text = candidate.text.lower()
    subject = str(fact["subject"])
    if subject == "user":
        return candidate.subject == "user"
    name = subject.lower()
    return name in candidate.subject.lower() or name in text


def _forms(text: str) -> set[str]:
    """The text lowercased, and its normalised forms (the corpus README's normalisation)."""
    return {text.lower(), *variants(text)} - {""}


def leaks(text: str, needles: Iterable[str]) -> bool:
    """Whether any needle occurs in the text, as written or normalised."""
    forms = _forms(text)
    return any(n in form for needle in needles for n in _forms(needle) for form in forms)


def _non_fact_captured(non_fact: str, candidates: Sequence[Candidate], messages: list[Any]) -> bool:
    words = content_words(non_fact)
    for candidate in candidates:
        source = next((m for m in messages if m["id"] == candidate.message_id), None)
        if source is None or non_fact not in str(source.get("content", "")):
            continue
        if words and len(words & content_words(candidate.text)) >= NON_FACT_OVERLAP * len(words):
            return True
    return False


def _ratio(hit: int, total: int) -> float | None:
    return hit / total if total else None


def capture_scores(
    conversations: Sequence[dict[str, Any]],
    split: str = "all",
    needles: dict[str, list[str]] | None = None,
    screened: bool = False,
) -> dict[str, Any]:
    """Recall and precision of `capture()` on the conversations of `split`, by kind and
    overall, with the misses, false positives, captured non-facts and leaked needles.
    `screened`: without the candidates the gate's learned check refuses, as a flush keeps
    them (`app.memory.guard.screen`; needs the embeddings extra)."""
    needles = load_needles() if needles is None else needles
    facts_by_kind: Counter[str] = Counter()
    recalled_by_kind: Counter[str] = Counter()
    cands_by_kind: Counter[str] = Counter()
    tp_by_kind: Counter[str] = Counter()
    strict_tp = 0
    misses: list[dict[str, Any]] = []
    false_positives: list[dict[str, Any]] = []
    non_facts: list[dict[str, Any]] = []
    leaked: list[dict[str, Any]] = []
    chosen = [c for c in conversations if in_split(c, split)]
    for conversation in chosen:
        messages = messages_of(conversation)
        candidates = capture(messages).candidates
        if screened:
            from vault_brain.storage.index import hostile

            flagged = hostile.kinds([c.text for c in candidates], None)
            candidates = [c for c, kind in zip(candidates, flagged, strict=True) if not kind]
        facts = conversation["facts"]
        for fact in facts:
            facts_by_kind[fact["kind"]] += 1
            if any(matches(fact, c) for c in candidates):
                recalled_by_kind[fact["kind"]] += 1
            else:
                misses.append({"conversation": conversation["id"], **fact})
        conversation_needles = [n for h in conversation.get("hostile", []) for n in needles[h]]
        for candidate in candidates:
            cands_by_kind[candidate.kind] += 1
            if any(holds_keywords(fact, candidate) for fact in facts):
                tp_by_kind[candidate.kind] += 1
            else:
                false_positives.append(_row(conversation["id"], candidate))
            strict_tp += any(matches(fact, candidate) for fact in facts)
            if leaks(candidate.text, conversation_needles):
                leaked.append(_row(conversation["id"], candidate))
        for non_fact in conversation.get("non_facts", []):
            if _non_fact_captured(non_fact["text"], candidates, messages):
                non_facts.append({"conversation": conversation["id"], **non_fact})
    kinds = {
        kind: {
            "facts": facts_by_kind[kind],
            "recalled": recalled_by_kind[kind],
            "recall": _ratio(recalled_by_kind[kind], facts_by_kind[kind]),
            "candidates": cands_by_kind[kind],
            "true_positives": tp_by_kind[kind],
            "precision": _ratio(tp_by_kind[kind], cands_by_kind[kind]),
        }
        for kind in KINDS
    }
    total_facts, total_cands = sum(facts_by_kind.values()), sum(cands_by_kind.values())
    return {
        "split": split,
        "conversations": len(chosen),
        "facts": total_facts,
        "recalled": sum(recalled_by_kind.values()),
        "recall": _ratio(sum(recalled_by_kind.values()), total_facts),
        "candidates": total_cands,
        "true_positives": sum(tp_by_kind.values()),
        "precision": _ratio(sum(tp_by_kind.values()), total_cands),
        "strict_precision": _ratio(strict_tp, total_cands),
        "by_kind": kinds,
        "misses": misses,
        "false_positives": false_positives,
        "non_facts_captured": non_facts,
        "hostile_in_candidates": leaked,
    }


def _row(conversation: str, candidate: Candidate) -> dict[str, Any]:
    return {
        "conversation": conversation,
        "message": candidate.message_id,
        "kind": candidate.kind,
        "subject": candidate.subject,
        "text": candidate.text,
    }


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{100 * value:5.1f}%"


def print_capture(scores: dict[str, Any], verbose: bool = False) -> None:
    print(f"capture, split {scores['split']}: {scores['conversations']} conversations")
    print(f"{'kind':<11}{'recall':>8}{'facts':>8}{'precision':>11}{'cands':>7}")
    for kind, row in scores["by_kind"].items():
        print(
            f"{kind:<11}{_pct(row['recall']):>8}{row['facts']:>8}"
            f"{_pct(row['precision']):>11}{row['candidates']:>7}"
        )
    print(
        f"{'overall':<11}{_pct(scores['recall']):>8}{scores['facts']:>8}"
        f"{_pct(scores['precision']):>11}{scores['candidates']:>7}"
    )
    print(f"strict precision (subject agreeing too): {_pct(scores['strict_precision']).strip()}")
    print(f"non-facts captured: {len(scores['non_facts_captured'])}")
    print(f"candidates holding a hostile needle: {len(scores['hostile_in_candidates'])}")
    if not verbose:
        return
    print("\nmisses:")
    for miss in scores["misses"]:
        print(
            f"  {miss['conversation']} m{miss['message']} {miss['kind']:<10} "
            f"{miss['subject']!r} {miss['keywords']}"
        )
    for title, key in (
        ("false positives", "false_positives"),
        ("non-facts captured", "non_facts_captured"),
        ("hostile needles in candidates", "hostile_in_candidates"),
    ):
        print(f"\n{title}:")
        for row in scores[key]:
            print(f"  {json.dumps(row, ensure_ascii=False)}")


# --------------------------------------------------------------------------- stage pipeline

HOSTILE_PER_SESSION = 4  # hostile strings per synthetic session
# Promotion and compaction act on sessions this short (the defaults wait for credit 0.7 and
# keep the last 10 messages verbatim).
PIPELINE_POLICY: dict[str, Any] = {"promotion_threshold": 0.1, "compaction_keep_recent": 2}
AGENT = "mcp"  # the source the MCP server acts as: an agent, not a person
DESTINATIONS = (
    "entities",
    "episodes",
    "archive",
    "MEMORY.md",
    "compaction summaries",
    "transcript records",
    "loop context",
    "agent reads",
    "agent stores",
    "other files",
)
# Plain facts the synthetic user turns carry beside a hostile string.
CARRIERS = (
    "I'm a teacher in Porto.",
    "My sister Ines is a nurse in Lyon.",
    "I prefer tea to coffee in the morning.",
    "Our project Kestrel ships on 12 May.",
    "My manager Odile Brandt runs the payments team.",
    "We decided to hold the team offsite in Ghent.",
    "I work as a pharmacist at Lindenhof Apotheke.",
    "My friend Tobias is a carpenter in Graz.",
    "I don't eat shellfish.",
    "Project Heron is behind schedule by a week.",
    "My dentist appointment is on Thursday at 10.",
    "I cycle to the office every day.",
    "Our landlord Femi Adebayo lives upstairs.",
    "I'd rather get updates by email than by phone.",
    "We settled on Postgres for the booking service.",
    "My daughter Liesel starts school in September.",
)
# Ways a user pastes something into an ordinary turn: inline, after a colon, as a paragraph.
FRAMES = (
    "Here is my note: {hostile}\n\nAlso: {fact}",
    "{fact} Someone pasted this into our wiki, is it safe?\n\n{hostile}",
    "quick one, a colleague sent me this: {hostile} Anyway: {fact}",
    "{fact}\n\nFrom the ticket:\n{hostile}\n\nThoughts?",
)
REPLIES = (
    "Thanks, noted. I won't act on pasted instructions or keep credentials.",
    "Got it. That pasted part looks unsafe, so I would leave it alone.",
    "Understood. Anything else you would like me to remember?",
)
# What an agent stores around a hostile string: category, title, a plain sentence.
STORES = (
    ("people", "Dana Whitfield", "Dana Whitfield is the user's accountant in Leeds."),
    ("projects", "Project Osprey", "Project Osprey moves the billing jobs to the new cluster."),
    ("preferences", "Meeting times", "The user prefers meetings before noon."),
)
# What an agent searches for: common words of the corpus, names of the synthetic sessions.
AGENT_QUERIES = (
    "project deadline",
    "prefers",
    "works at",
    "decided",
    "session",
    "teacher Porto",
    "Kestrel",
    "Odile Brandt",
    "Dana Whitfield",
    "Osprey",
    "Meeting times",
    "Wren Okafor",
)
BIG_NOTES = 10_000
BIG_MESSAGES = 200
FLUSH_TARGET_SECONDS = 1.0


class Session(NamedTuple):
    """A conversation for the pipeline, and the user's next message (the loop's intake)."""

    id: str
    messages: list[dict[str, str]]
    ask: str


class Needle(NamedTuple):
    """A needle of a hostile string, with the forms it is searched in."""

    hostile: str
    text: str
    forms: frozenset[str]


def load_hostile(folder: Path = CORPUS) -> list[dict[str, Any]]:
    """The hostile strings, in file order."""
    return load_jsonl(folder / "hostile.jsonl")


def corpus_sessions(conversations: Sequence[dict[str, Any]]) -> list[Session]:
    """The labelled conversations as sessions `corpus-<id>`, each then asking about the
    subject of its first fact."""
    out = []
    for conversation in conversations:
        subject = str(conversation["facts"][0]["subject"])
        about = "me" if subject == "user" else subject
        out.append(
            Session(
                f"corpus-{conversation['id']}",
                [{"role": m["role"], "content": m["content"]} for m in conversation["messages"]],
                f"Remind me what you know about {about}.",
            )
        )
    return out


def synthetic_sessions(
    hostile: Sequence[dict[str, Any]], per_session: int = HOSTILE_PER_SESSION
) -> list[Session]:
    """Sessions `hostile-<n>` whose user turns embed every hostile string once, `per_session`
    to a session, each beside a plain fact; the next message pastes the first one again."""
    out = []
    for start in range(0, len(hostile), per_session):
        n = start // per_session
        messages = [
            {"role": "user", "content": f"Hi! {CARRIERS[n % len(CARRIERS)]}"},
            {"role": "assistant", "content": REPLIES[n % len(REPLIES)]},
        ]
        chunk = hostile[start : start + per_session]
        for i, row in enumerate(chunk, start):
            fact = CARRIERS[(i + 1) % len(CARRIERS)]
            text = FRAMES[i % len(FRAMES)].format(hostile=row["text"], fact=fact)
            messages += [
                {"role": "user", "content": text},
                {"role": "assistant", "content": REPLIES[i % len(REPLIES)]},
            ]
        ask = f"What do you remember about me? This came up again:\n\n{chunk[0]['text']}"
        out.append(Session(f"hostile-{n + 1:02d}", messages, ask))
    return out


def needle_list(hostile: Sequence[dict[str, Any]]) -> list[Needle]:
    """Every needle of the hostile strings, its forms computed once."""
    return [
        Needle(row["id"], needle, frozenset(_forms(needle)))
        for row in hostile
        for needle in row["needles"]
    ]


def found_needles(text: str, needles: Sequence[Needle]) -> Iterator[tuple[Needle, str]]:
    """Each needle in the text (as written or normalised), with the line that holds it."""
    forms = _forms(text)
    for needle in needles:
        if any(n in form for n in needle.forms for form in forms):
            yield needle, _line_of(text, needle)


def _line_of(text: str, needle: Needle) -> str:
    for line in text.splitlines():
        if any(n in form for n in needle.forms for form in _forms(line)):
            return line.strip()
    return text.strip()  # the needle spans lines


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys too, so that needles are matched unescaped."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _json_text(raw: str) -> str:
    """The strings of a JSON or JSON Lines file, one a line (the raw text if it is neither)."""
    try:
        values = [json.loads(raw)]
    except ValueError:
        try:
            values = [json.loads(line) for line in raw.splitlines() if line.strip()]
        except ValueError:
            return raw
    return "\n".join(s for value in values for s in _strings(value))


class Pipeline:
    """One vault, every session pushed through every path, and what was found where."""

    def __init__(
        self,
        root: Path,
        sessions: Sequence[Session],
        hostile: Sequence[dict[str, Any]],
    ) -> None:
        self.root = root
        self.sessions = sessions
        self.hostile = hostile
        self.needles = needle_list(hostile)
        self.env = Environment()  # nothing configured: offline, whatever the shell has set
        self.leaks: dict[str, list[dict[str, str]]] = {d: [] for d in DESTINATIONS}
        self.scanned: Counter[str] = Counter(dict.fromkeys(DESTINATIONS, 0))
        self.steps: Counter[str] = Counter()
        self.person: MemoryAPI  # as `vb` commands use it (a person at the keyboard)
        self.agent: MemoryAPI  # as the MCP server uses it (an agent, session "agent")

    def scan(self, destination: str, where: str, text: str) -> None:
        if not text.strip():
            return
        self.scanned[destination] += 1
        for needle, line in found_needles(text, self.needles):
            self.leaks[destination].append(
                {"hostile": needle.hostile, "where": where, "needle": needle.text, "line": line}
            )

    def run(self) -> None:
        """Every path, in the order a vault sees them, then every destination scanned."""
        create_vault(self.root)
        strategy = self.root / "STRATEGY.md"
        strategy.write_bytes(edit_front_matter(strategy.read_bytes(), PIPELINE_POLICY))
        # One API for each actor, as a long-running process holds it: the index is
        # reconciled once and kept current by each write.
        self.person = MemoryAPI.open(self.root, self.env, source=PERSON)
        self.agent = MemoryAPI.open(self.root, self.env, session="agent", source=AGENT)
        for session in self.sessions:
            self.person.persist(session.id, parse_records(session.messages))
            compaction = self.person.compact_session(session.id, force=True)
            self.steps["compactions"] += compaction.applied
            self.steps["flushes"] += self.person.flush(session.id).applied
        for operation in ("promote", "consolidate", "promote"):
            result = self.person.run(self.person.plan(operation), dry_run=False)
            done = "set" if operation == "promote" else "archive"
            self.steps[f"{operation}d episodes"] += sum(a.op == done for a in result.actions)
        self.agent_stores()
        self.steps["MEMORY.md memories"] = len(self.person.memory_file().included)
        for session in self.sessions:
            self.person.intake(session.id, session.ask)
            context = self.person.context(session.id)
            self.steps["contexts with memories"] += bool(context.retrieved)
            self.steps["contexts with a summary"] += bool(context.summary)
            system = str(context.messages_openai[0]["content"])
            self.scan("loop context", f"context of {session.id}", system)
        self.agent_reads()
        self.scan_files()

    def agent_stores(self) -> None:
        """`memory_store` and `memory_update` as an agent calls them, with a hostile string
        in a plausible memory; a refusal is expected, a stored note is scanned."""
        agent = self.agent
        plain = "Wren Okafor is the user's landlord."
        target = agent.add("entity", "Wren Okafor", plain, "people").note.id
        for n, row in enumerate(self.hostile):
            category, title, fact = STORES[n % len(STORES)]
            calls: list[tuple[str, Callable[[], NoteResult]]] = [
                (
                    "memory_store",
                    partial(
                        agent.add,
                        "entity",
                        f"{title} {row['id']}",
                        f"{fact} Notes from the call: {row['text']}",
                        category,
                    ),
                ),
                (
                    "memory_update",
                    partial(agent.update, target, content=f"{plain} He sent this: {row['text']}"),
                ),
            ]
            for tool, call in calls:
                self.steps["agent stores attempted"] += 1
                try:
                    note = call().note
                except RefusedError:
                    self.steps["agent stores refused"] += 1
                    continue
                text = (self.root / note.path).read_text(encoding="utf-8")
                self.scan("agent stores", f"{tool} {row['id']}: {note.path}", text)

    def agent_reads(self) -> None:
        """`memory_search` and `memory_retrieve` as an agent calls them: the results of a few
        searches, and every note of the vault as retrieving it shows it."""
        for query in AGENT_QUERIES:
            for hit in self.agent.search(query, 5).results:
                where = f"memory_search {query!r}: {hit.path}"
                self.scan("agent reads", where, f"{hit.title}\n{hit.snippet}")
        for row in self.agent.list_notes().notes:
            note = self.agent.retrieve(row.id).note
            self.scan("agent reads", f"memory_retrieve: {note.path}", f"{note.title}\n{note.body}")

    def scan_files(self) -> None:
        """Every file under the vault but .git/, the index's folders in .vb/ and what
        sessions/ holds verbatim (its transcripts' messages, the session list)."""
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root)
            top = rel.parts[0]
            if not path.is_file() or top == ".git" or (top == ".vb" and len(rel.parts) > 2):
                continue
            if top == "sessions":
                if path.suffix == ".jsonl":
                    self.scan_transcript(path)
                continue
            raw = path.read_text(encoding="utf-8", errors="replace")
            text = _json_text(raw) if path.suffix in (".json", ".jsonl") else raw
            if top in ("entities", "episodes", "archive", "MEMORY.md"):
                self.scan(top, rel.as_posix(), text)
            else:
                self.scan("other files", rel.as_posix(), text)

    def scan_transcript(self, path: Path) -> None:
        """The records vb adds to a transcript: compaction summaries, flush records,
        retrievals (without the query, which is the user's message)."""
        rel = path.relative_to(self.root).as_posix()
        for record in read_records(path):
            kind = record_kind(record)
            if kind in MESSAGE_TYPES:
                continue
            where = f"{rel}: {kind} {record.get('id', '')}".rstrip()
            if kind == "compaction":
                self.scan("compaction summaries", where, "\n".join(_strings(record)))
                continue
            kept = {k: v for k, v in record.items() if not (kind == "retrieval" and k == "query")}
            self.scan("transcript records", where, "\n".join(_strings(kept)))


def entity_recall(root: Path, conversations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recall of the labelled facts in the vault's entity notes (see the module docstring)."""
    notes = [
        (path.stem, path.read_text(encoding="utf-8"))
        for path in sorted((root / "entities").rglob("*.md"))
    ]
    facts_by_kind: Counter[str] = Counter()
    recalled_by_kind: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    for conversation in conversations:
        cites = re.compile(rf"\bcorpus-{re.escape(conversation['id'])}\b")
        for fact in conversation["facts"]:
            facts_by_kind[fact["kind"]] += 1
            name = str(fact["subject"])
            keywords = [k.lower() for k in fact["keywords"]]
            if any(
                (name == "user" or slugify(name) in stem or name.lower() in text.lower())
                and any(
                    cites.search(line) and all(k in line.lower() for k in keywords)
                    for line in text.splitlines()
                )
                for stem, text in notes
            ):
                recalled_by_kind[fact["kind"]] += 1
            else:
                misses.append({"conversation": conversation["id"], **fact})
    total = sum(facts_by_kind.values())
    return {
        "facts": total,
        "recalled": sum(recalled_by_kind.values()),
        "recall": _ratio(sum(recalled_by_kind.values()), total),
        "by_kind": {
            kind: {
                "facts": facts_by_kind[kind],
                "recalled": recalled_by_kind[kind],
                "recall": _ratio(recalled_by_kind[kind], facts_by_kind[kind]),
            }
            for kind in KINDS
        },
        "misses": misses,
    }


def pipeline_scores(
    root: Path,
    conversations: Sequence[dict[str, Any]] | None = None,
    hostile: Sequence[dict[str, Any]] | None = None,
    per_session: int = HOSTILE_PER_SESSION,
) -> dict[str, Any]:
    """Run the pipeline stage on a new vault at `root`: the leaks by destination (each with
    the hostile id, where, the needle and the line), how much each destination and step was
    exercised, and the recall of the labelled facts in entity notes."""
    conversations = load_corpus() if conversations is None else conversations
    hostile = load_hostile() if hostile is None else hostile
    sessions = corpus_sessions(conversations) + synthetic_sessions(hostile, per_session)
    started = time.perf_counter()
    pipeline = Pipeline(root, sessions, hostile)
    pipeline.run()
    seconds = time.perf_counter() - started
    used = {
        row["id"]
        for row in hostile
        if any(row["text"] in m["content"] for s in sessions for m in s.messages)
    }
    return {
        "vault": str(root),
        "conversations": len(conversations),
        "synthetic_sessions": len(sessions) - len(conversations),
        "hostile": len(hostile),
        "hostile_used": len(used),
        "seconds": round(seconds, 2),
        "steps": dict(pipeline.steps),
        "scanned": dict(pipeline.scanned),
        "leak_count": sum(len(rows) for rows in pipeline.leaks.values()),
        "leaks": pipeline.leaks,
        "recall": entity_recall(root, conversations),
    }


def gate_cost(conversations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Milliseconds per corpus message of the gate as capture runs it (`prose_sentences`)
    and as a store runs it (`judge`)."""
    texts = [str(m["content"]) for c in conversations for m in c["messages"]]
    prose_sentences(texts[0])  # warm-up: the markdown parser is built on first use
    out: dict[str, Any] = {"messages": len(texts)}
    runs: dict[str, Callable[[str], object]] = {"prose_sentences": prose_sentences, "judge": judge}
    for name, run in runs.items():
        started = time.perf_counter()
        for text in texts:
            run(text)
        out[f"{name}_ms"] = round((time.perf_counter() - started) * 1000 / len(texts), 3)
    return out


def big_flush(root: Path, conversations: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Seconds of one offline `flush` (opened as `vb flush` opens it) of a session of
    `BIG_MESSAGES` corpus messages on a generated vault of `BIG_NOTES` notes."""
    gen_vault.generate(root, BIG_NOTES, seed=7)
    env = Environment()
    MemoryAPI.open(root, env).index()
    corpus = [m for c in conversations for m in c["messages"]]
    records = parse_records([corpus[n % len(corpus)] for n in range(BIG_MESSAGES)])
    MemoryAPI.open(root, env).persist("big-flush", records)
    started = time.perf_counter()
    result = MemoryAPI.open(root, env).flush("big-flush")
    return {
        "notes": BIG_NOTES,
        "messages": BIG_MESSAGES,
        "seconds": round(time.perf_counter() - started, 3),
        "target_seconds": FLUSH_TARGET_SECONDS,
        "notes_written": len(result.plan.actions),
    }


def print_pipeline(report: dict[str, Any], verbose: bool = False) -> None:
    print(
        f"pipeline: {report['conversations']} conversations + {report['synthetic_sessions']} "
        f"synthetic sessions, {report['hostile_used']}/{report['hostile']} hostile strings "
        f"used, {report['seconds']:.1f} s"
    )
    print("steps: " + ", ".join(f"{k} {v}" for k, v in report["steps"].items()))
    print(f"\n{'destination':<22}{'scanned':>8}{'leaks':>7}")
    for destination in DESTINATIONS:
        print(
            f"{destination:<22}{report['scanned'][destination]:>8}"
            f"{len(report['leaks'][destination]):>7}"
        )
    print(f"{'total':<22}{sum(report['scanned'].values()):>8}{report['leak_count']:>7}")
    recall = report["recall"]
    print("\nrecall in entity notes (not a target while routing changes)")
    print(f"{'kind':<11}{'recall':>8}{'facts':>8}")
    for kind, row in recall["by_kind"].items():
        print(f"{kind:<11}{_pct(row['recall']):>8}{row['facts']:>8}")
    print(f"{'overall':<11}{_pct(recall['recall']):>8}{recall['facts']:>8}")
    gate = report.get("gate")
    if gate:
        print(
            f"\ngate: prose_sentences {gate['prose_sentences_ms']:.3f} ms/message, judge "
            f"{gate['judge_ms']:.3f} ms/message ({gate['messages']} corpus messages)"
        )
    big = report.get("big_flush")
    if big:
        print(
            f"flush of {big['messages']} messages on a {big['notes']:,}-note vault: "
            f"{big['seconds']:.2f} s (target <= {big['target_seconds']:g} s), "
            f"{big['notes_written']} notes written"
        )
    if report["leak_count"]:
        print("\nleaks (hostile id, needle, places; --verbose lists every place):")
    for destination, rows in report["leaks"].items():
        groups: dict[tuple[str, str], list[dict[str, str]]] = {}
        for row in rows:
            groups.setdefault((row["hostile"], row["needle"]), []).append(row)
        for (hostile, needle), places in groups.items():
            first = places[0]
            print(
                f"  {destination}: {hostile} {needle!r} in {len(places)} place(s), "
                f"first {first['where']}: {first['line'][:160]}"
            )
            if verbose:
                for row in places[1:]:
                    print(f"    {row['where']}: {row['line'][:160]}")
    if verbose:
        print("\nrecall misses:")
        for miss in recall["misses"]:
            print(
                f"  {miss['conversation']} m{miss['message']} {miss['kind']:<10} "
                f"{miss['subject']!r} {miss['keywords']}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--stage", choices=("capture", "pipeline"), default="capture")
    parser.add_argument("--split", choices=SPLITS, default="all", help="capture: which half")
    parser.add_argument(
        "--set",
        choices=SETS,
        default="corpus",
        help="capture: conversations.jsonl (corpus), blind.jsonl, blind2.jsonl or blind3.jsonl",
    )
    parser.add_argument(
        "--big", action="store_true", help="pipeline: also time a flush on a 10,000-note vault"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="pipeline: build the vaults in this new folder and keep them",
    )
    parser.add_argument(
        "--screened",
        action="store_true",
        help="capture: leave out what the gate's learned check refuses, as a flush does",
    )
    parser.add_argument("--verbose", action="store_true", help="list misses (and false positives)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    add_record_option(parser)
    args = parser.parse_args(argv)
    if args.stage == "capture":
        if args.set == "corpus":
            scores = capture_scores(load_corpus(), args.split, screened=args.screened)
        else:
            rows = load_jsonl(CORPUS / f"{args.set}.jsonl")
            scores = capture_scores(rows, "all", screened=args.screened)
            scores["split"] = f"{args.set}.jsonl"
        if args.record:
            family = args.set if args.split == "all" else f"{args.set}-{args.split}"
            family += "-screened" if args.screened else ""
            kinds = [k["recall"] for k in scores["by_kind"].values() if k["recall"] is not None]
            weakest = {"lowest_kind_recall": min(kinds)} if kinds else {}
            save_record(f"capture-{family}", {**scores, **weakest}, argv=argv)
        if args.json:
            print(json.dumps(scores, ensure_ascii=False, indent=2))
        else:
            print_capture(scores, args.verbose)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-capture-") as tmp:
        folder = args.keep or Path(tmp)
        corpus = load_corpus()
        report = pipeline_scores(folder / "vault", corpus)
        report["gate"] = gate_cost(corpus)
        if args.big:
            report["big_flush"] = big_flush(folder / "big", corpus)
    if args.record:
        save_record("capture-pipeline", report, argv=argv)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print_pipeline(report, args.verbose)
    return 1 if report["leak_count"] else 0


if __name__ == "__main__":
    sys.exit(main())
