"""Routing facts to entity notes: append to the note that exists, create the one that does
not, never twice the same statement (nor one that says nothing the note does not already
say), and a statement that fills the slot of an older one ("lives in York" after "lives in
Leeds") supersedes it: the old line stays, the new one says what it replaces and the note's
`supersedes` list names it. Shared by promotion and the memory flush."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from vault_brain.app.memory.updates import Unavailable, UpdateJudge, readable
from vault_brain.app.memory.vault import Vault
from vault_brain.domain.capture.change import changes, may_change
from vault_brain.domain.capture.facts import Fact
from vault_brain.domain.capture.slots import left_values, names_value, same_slot
from vault_brain.domain.capture.supersede import (
    current_text,
    retire,
    split_previously,
    statement_of,
    vb_statement,
)
from vault_brain.domain.clock import now_iso
from vault_brain.domain.notes.credit import is_scored
from vault_brain.domain.notes.model import is_vb_source, merged_source, note_source
from vault_brain.domain.policy.exclusions import counters_refused
from vault_brain.domain.policy.plan import Action
from vault_brain.domain.policy.scopes import GLOBAL, scope_folder
from vault_brain.domain.text import content_words, slugify
from vault_brain.storage.notes.frontmatter import parse_text
from vault_brain.storage.notes.frontmatter_edit import edit_front_matter


def new_note_text(meta: dict[str, Any], body: str) -> str:
    return edit_front_matter(b"", meta).decode("utf-8") + body.strip() + "\n"


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


LOOSE_SLOTS = frozenset({"identity:role"})
# A statement whose content words overlap an older one's this much says nothing new.
NEAR_DUPLICATE = 0.8


def fact_key(line: str) -> str:
    """A fact line reduced for exact de-duplication."""
    return statement_of(line).lower()


def says_nothing_new(words: set[str], older: set[str]) -> bool:
    """True when a statement's content words are all in an older one, or nearly the same."""
    if not words or not older:
        return False
    return words <= older or len(words & older) / len(words | older) >= NEAR_DUPLICATE


class EntityFeed:
    """Entity notes receiving facts during one plan."""

    def __init__(
        self,
        vault: Vault,
        initial: float,
        rows: dict[str, dict[str, Any]] | None = None,
        writer: str = "conversation",
    ) -> None:
        """`rows` (path -> credit row) when the caller already read them all; otherwise each
        target is looked up in the index on its own, without reading every note's row.
        `writer`: the `source` of what it writes (conversation: a flush; merge: promotion)."""
        self.vault = vault
        self.writer = writer
        self.rows = rows
        self.initial = initial
        self.targets: dict[str, dict[str, Any]] = {}
        self.replacing: dict[str, str] = {}  # a fact line -> the older statement it supersedes
        # the conversation window (a flush's session, a promoted episode) each statement this
        # plan adds came from, and the one being fed now: statements of one window never
        # replace each other (said together, they are different facts far likelier than a
        # change, and a window's new lines are not retired by an append)
        self.windows: dict[str, str] = {}
        self.window = ""
        self.globbed: dict[str, list[str]] = {}  # a subject's file pattern -> its notes
        self.judge: UpdateJudge | None = UpdateJudge(vault)  # None: the rules decide

    def target(self, rel: str, scope: str = GLOBAL) -> dict[str, Any] | None:
        """The note at `rel` receiving facts (None: vb may not edit it); a new one is
        created in `scope`."""
        if rel in self.targets:
            return self.targets[rel]
        parts = PurePosixPath(rel)
        category, slug = parts.parts[1], parts.stem
        folder = scope_folder(scope)
        full = self.vault.paths.note(rel)
        base: dict[str, Any] = {
            "lines": [],
            "gain": 0.0,
            "sources": [],
            "category": category,
            "supersedes": [],
            "retire": {},
        }
        if full.exists():
            raw = full.read_bytes()
            parsed = parse_text(raw)
            if parsed.error or not _is_utf8(raw):
                return None  # vb never edits a note it cannot read safely
            row = self._row(rel)
            current = current_text(parsed.body).splitlines()
            target: dict[str, Any] = {
                **base,
                "exists": True,
                "id": row["id"] if row else f"entity-{category}-{slug}",
                "title": row["title"] if row else slug,
                "base": row["credit"] if row else self.initial,
                # credit from promotion, unless the person keeps the note out of counters
                "counted": counters_refused(rel, parsed.meta, self.vault.policy.no_counters)
                is None,
                "source": _source_after(parsed.meta.get("source"), writer=self.writer),
                "statements": [
                    statement_of(line)
                    for line in current
                    if line.strip() and not line.lstrip().startswith("#")
                ],
                # the lines vb wrote (the ones an update may retire), lower case
                "ours": {found for line in current if (found := vb_statement(line))},
                # what the note used to say: never fed in again as if new
                "retired": {
                    statement_of(line).lower()
                    for line in split_previously(parsed.body)[1].splitlines()
                    if line.strip()
                },
            }
        else:
            new_id = f"entity-{category}-{folder}-{slug}" if folder else f"entity-{category}-{slug}"
            if self.vault.index.stored_by_id(new_id) is not None:
                return None  # an entity with that id lives elsewhere; do not create a twin
            title = slug.replace("-", " ").title()
            target = {**base, "exists": False, "id": new_id, "title": title, "scope": scope}
            target.update({"base": self.initial, "statements": [], "ours": set(), "retired": set()})
        target["known"] = {s.lower() for s in target["statements"]}
        target["words"] = [content_words(s) for s in target["statements"]]
        self.targets[rel] = target
        return target

    def prepare(self, facts: list[Fact]) -> None:
        """Have the learned judge embed, in one batch, the statements of the facts it will
        judge (if it runs)."""
        statements = [s for s in (statement_of(f.statement) for f in facts) if readable(s)]
        if self.judge is not None and statements:
            try:
                self.judge.prepare(statements)
            except Unavailable:
                self.judge = None

    def _row(self, rel: str) -> dict[str, Any] | None:
        if self.rows is not None:
            return self.rows.get(rel)
        found = self.vault.index.row_for_path(rel)
        if found is not None and is_scored(found.get("credit")):
            return found
        return None if found is None else {**found, "credit": self.initial}

    def fresh(self, facts: Iterable[Fact], provenance: str, window: str) -> dict[str, list[str]]:
        """Fact lines per entity path that say something its note does not say yet (nothing
        is committed until `accept`), from the conversation `window` (a session, an
        episode)."""
        self.window = window
        out: dict[str, list[str]] = {}
        for fact in facts:
            rel = self._home(fact)
            rel = self._slot_home(fact, rel) or rel
            target = self.target(rel, fact.scope)
            if target is None:
                continue
            statement = statement_of(fact.statement)
            words = content_words(statement)
            pending = [statement_of(x) for x in out.get(rel, [])]
            if statement.lower() in target["retired"]:
                continue  # an old fact the note already retired (from an older episode)
            if statement.lower() in target["known"] or statement.lower() in (
                p.lower() for p in pending
            ):
                continue
            older = [*target["words"], *(content_words(p) for p in pending)]
            if any(says_nothing_new(words, w) for w in older):
                continue
            replaced = self._superseded(fact, target, self._said_of(rel, fact))
            # what it replaces is in the note's `supersedes` and its Previously section, not
            # on the current line (which reaches MEMORY.md and an agent's context)
            line = f"- {statement} ({provenance})"
            if replaced:
                self.replacing[line] = replaced
            self.windows[statement] = window
            out.setdefault(rel, []).append(line)
        return out

    @staticmethod
    def _home(fact: Fact) -> str:
        folder = scope_folder(fact.scope)
        where = f"{fact.category}/{folder}" if folder else fact.category
        return f"entities/{where}/{slugify(fact.subject)}.md"

    def _namesakes(self, rel: str, scope: str) -> list[tuple[str, dict[str, Any]]]:
        """The existing notes of `rel`'s subject in any category (the same folder and file
        name: people, preferences, projects, ...), its own first, with their targets."""
        pattern = "/".join(("*", *PurePosixPath(rel).parts[2:]))
        if pattern not in self.globbed:  # (read once a plan: it adds no note before applying)
            root = self.vault.paths.root / "entities"
            self.globbed[pattern] = [
                f"entities/{p.relative_to(root).as_posix()}" for p in root.glob(pattern)
            ]
        rels = self.globbed[pattern]
        found = []
        for other in sorted(rels, key=lambda o: (o != rel, o)):
            target = self.target(other, scope)
            if target is not None and target["exists"]:
                found.append((other, target))
        return found

    def _replaceable(self, target: dict[str, Any]) -> list[str]:
        """What an update may replace in `target`: the lines vb wrote, and those this plan
        adds to it from another window."""
        ours = [s for s in target["statements"] if s.lower() in target["ours"]]
        return [*ours, *self._other_windows(statement_of(x) for x in target["lines"])]

    def _other_windows(self, statements: Iterable[str]) -> list[str]:
        """`statements` but those this plan adds from the window being fed."""
        return [s for s in statements if self.windows.get(s, "") != self.window]

    def _said_of(self, rel: str, fact: Fact) -> list[str]:
        """Every line an update of the fact's subject may replace, in all of its notes (the
        one nearest in meaning to a change is looked for among them all)."""
        return [s for _, t in self._namesakes(rel, fact.scope) for s in self._replaceable(t)]

    def _slot_home(self, fact: Fact, rel: str) -> str | None:
        """Another note of the same subject (people, preferences, projects, ...) stating an
        older value of the fact's slot: the new line goes there, beside the line it
        replaces (a slot belongs to the subject, whichever of its notes holds it)."""
        if self.judge is None and not may_update(fact):
            return None
        context = self._said_of(rel, fact)
        for other, target in self._namesakes(rel, fact.scope):  # its own note first
            if self._superseded(fact, target, context):
                return other
        return None

    def home_of_change(self, fact: Fact) -> str | None:
        """The note of the fact's subject (any category) holding a line vb wrote that the
        learned judge finds this fact gives a new value to, or None (also without the
        judge: a statement capture did not keep is kept only for what the model sees)."""
        if self.judge is None or not readable(statement_of(fact.statement)):
            return None
        home = self._slot_home(fact, self._home(fact))
        return home if self.judge is not None else None  # (None: the rules answered)

    def _superseded(self, fact: Fact, target: dict[str, Any], context: list[str]) -> str | None:
        """The older statement of `target` this fact updates: as the learned judge sees it,
        of the lines vb wrote (the ones an update retires), the line of `context` (all its
        subject's) nearest to a change held to a lower bar, or where it cannot run, by the
        rules (`superseded_by_rules`)."""
        statement = statement_of(fact.statement)  # (as its line will say it)
        # a statement another new fact of this plan replaces is replaced once
        taken = set(self.replacing.values())
        if self.judge is not None and readable(statement):
            olds = [s for s in self._replaceable(target) if s not in taken]
            try:
                return self.judge.older(statement, olds, among=context)
            except Unavailable:
                self.judge = None
        return superseded_by_rules(
            fact, [s for s in self._other_windows(target["statements"]) if s not in taken]
        )

    def accept(self, rel: str, lines: list[str], source: str, gain: float = 0.0) -> None:
        target = self.targets[rel]
        for line in lines:
            statement = statement_of(line)
            target["known"].add(statement.lower())
            target["statements"].append(statement)
            target["words"].append(content_words(statement))
            if line in self.replacing:
                target["supersedes"].append(self.replacing[line])
                target["retire"][self.replacing[line]] = statement
        target["lines"] += lines
        target["gain"] += gain
        if source not in target["sources"]:
            target["sources"].append(source)

    def actions(self) -> list[Action]:
        out: list[Action] = []
        for rel, target in self.targets.items():
            if not target["lines"]:
                continue
            credit = round(min(1.0, target["base"] + target["gain"]), 4)
            why = f"{len(target['lines'])} fact(s) from {', '.join(target['sources'])}"
            text = "\n".join(target["lines"])
            if target["exists"]:
                keys = (
                    {"credit": credit, "updated": now_iso()}
                    if target["gain"] and target["counted"]
                    else {"updated": now_iso()}
                )
                keys.update(target["source"])
                extend = {"supersedes": target["supersedes"]} if target["supersedes"] else {}
                out.append(
                    Action("append", rel, why, keys, text, target["id"], extend, target["retire"])
                )
                continue
            meta = {
                "id": target["id"],
                "type": "entity",
                "category": target["category"],
                "title": target["title"],
                "tags": [],
                "created": now_iso(),
                "updated": now_iso(),
                "credit": credit,
                "source": self.writer,
            }
            if target["supersedes"]:
                meta["supersedes"] = target["supersedes"]
            if target["scope"] != GLOBAL:
                meta["scope"] = target["scope"]
            body = retire("", target["retire"], text, now_iso()[:10])
            out.append(
                Action("create", rel, why, content=new_note_text(meta, body), id=target["id"])
            )
        return out


def may_update(fact: Fact) -> bool:
    """Whether the rules could find an older statement this fact updates: it fills a slot,
    names something left, or says it is a change."""
    return bool(fact.slot or left_values(fact.statement) or may_change(fact.statement))


def superseded_by_rules(fact: Fact, statements: list[str]) -> str | None:
    """The latest older statement filling the same slot as this fact, else the latest
    naming what this fact says its subject left ("dropped Visio"), else the latest it
    `changes`, if any."""
    # a role is loosely read ("I volunteer at ...", "I play bass in ..."): one person
    # holds several, so only a statement saying it is a change replaces one
    if fact.slot and (fact.slot not in LOOSE_SLOTS or may_change(fact.statement)):
        for older in reversed(statements):
            if same_slot(_slot_of(fact.kind, fact.subject, older), fact.slot):
                return older
    for value in left_values(fact.statement):
        for older in reversed(statements):
            if names_value(older, value) and not left_values(older):
                return older
    for older in reversed(statements):  # no slot rule knows the attribute
        if changes(fact.statement, older):
            return older
    return None


def _source_after(old: Any, writer: str) -> dict[str, Any]:
    """The `source` key of a note vb appends `writer`'s facts to ({} when it stays)."""
    if not is_vb_source(old):
        return {}  # the person's own key (a clipping's URL): never overwritten
    now = merged_source(note_source(old), writer, append=True)
    return {} if now == note_source(old) else {"source": now}


def _slot_of(kind: str, subject: str, text: str) -> str | None:
    # lazy: the capture rules compile hundreds of patterns (about 0.2 s), which servers that
    # only search (vb mcp at start) need not pay
    from vault_brain.domain.capture.conversation import slot_of

    return slot_of(kind, subject, text)
