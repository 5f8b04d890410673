"""The Whoosh schema: what a note contributes to the search index."""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import Any

from whoosh.analysis import (
    CompositeAnalyzer,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
    StemmingAnalyzer,
    StopFilter,
    Token,
)
from whoosh.analysis.tokenizers import default_pattern
from whoosh.columns import VarBytesColumn
from whoosh.fields import BOOLEAN, COLUMN, ID, KEYWORD, STORED, TEXT, Schema
from whoosh.formats import Frequency

from vault_brain.domain.capture.supersede import PROVENANCE, split_previously, statement_of
from vault_brain.domain.clock import epoch
from vault_brain.domain.notes.model import Note
from vault_brain.domain.policy.exclusions import is_private
from vault_brain.domain.text import unique

SCHEMA_VERSION = 14  # 10: each row says who wrote the note (`source`); 11: `previously`,
# `slots` and `superseded`; 12: a conflict copy is not current (`conflict_of`); 13: a hash of
# the body (`body_hash`: a note renamed is known by it, storage/index/renames.py); 14: text
# postings keep no count value (`TermWeights`)
SUMMARY_CHARS = 400
MAX_SLOT_LINES = 200  # an entity note's first lines read for the attributes they fill
# Text fields searched by a query, with their BM25F field boosts.
# Whoosh's BM25F adds one score per field, so a word in both title and body already counts
# twice: boosting the title further over-weights it (SciFact nDCG@10 0.651 at 2.0, 0.662 at 1.0).
# A note's "## Previously" section (facts it used to state, domain/capture/supersede.py) is searched
# apart from its body and counts less, so the note's current lines outrank its old ones.
# `slots`: the words a question about a fact line's attribute uses ("live", "employer", ...),
# counted double: a line that fills the attribute asked about answers the question.
TEXT_FIELDS = {
    "title": 1.0,
    "aliases": 1.0,
    "tagtext": 1.0,
    "body": 1.0,
    "previously": 0.3,
    "slots": 2.0,
}

# English function words. Whoosh's default list has 34; questions ("what did she say about
# her ...") keep many more in every query, which costs LoCoMo recall about 6 points at R@5.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's
    i i'd i'll i'm i've if in into is isn't it it's its itself just let's me more most mustn't
    my myself no nor not now of off on once only or other ought our ours ourselves out over own
    same shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's will with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also may might
    must shall us yet s t d ll m o re ve y aren couldn didn doesn don hadn hasn haven isn
    mustn shan shouldn wasn weren won wouldn
    """.split()  # noqa: SIM905 (a word list reads best as text)
)


class NoteAnalyzer(CompositeAnalyzer):
    """Whoosh's StemmingAnalyzer (a regex tokenizer, lowercase, stop words, the Porter stemmer,
    chained as generators), with a field's indexing (mode "index", no positions, character
    offsets or originals asked for) done a step at a time over all the words of a value (the
    tokenizer's words found at once, lowercased, filtered, stemmed): the same terms (a test
    compares them), three and a half times faster, and analysis was a fifth of an index build's
    time at 100k notes. Queries, and any other use, run the chain as it is."""

    _INDEX_ONLY = ("positions", "chars", "keeporiginal")

    def __call__(self, value: str, no_morph: bool = False, **kwargs: Any) -> Any:
        plain = (
            not no_morph
            and kwargs.get("mode") == "index"
            and kwargs.get("tokenize", True)
            and kwargs.get("removestops", True)
            and not any(kwargs.get(k) for k in self._INDEX_ONLY)
            and self._chain() is not None
        )
        if not plain:
            return super().__call__(value, no_morph=no_morph, **kwargs)
        return self._indexed(value, kwargs)

    def _chain(self) -> tuple[Any, Any, Any] | None:
        """(tokenizer, stop filter, stem filter) when the chain is StemmingAnalyzer's."""
        kinds = (RegexTokenizer, LowercaseFilter, StopFilter, StemFilter)
        items = self.items
        if len(items) != len(kinds) or any(
            type(i) is not k for i, k in zip(items, kinds, strict=True)
        ):
            return None
        if items[0].gaps or items[2].renumber is not True or items[3].lang:
            return None
        return items[0], items[2], items[3]

    def _indexed(self, value: str, kwargs: dict[str, Any]) -> Any:
        token = Token(**kwargs)
        for text in self.index_terms(value):
            token.text = text
            token.boost = 1.0
            token.stopped = False
            yield token

    def index_terms(self, value: str) -> list[str]:
        """The terms a field's indexing makes of `value`, as text (the chain must be
        StemmingAnalyzer's: `plain_chain`). Each step runs over all the words at once."""
        chain = self._chain()
        assert chain is not None
        tokenizer, stop, stemmer = chain
        stops, shortest, longest = stop.stops, stop.min, stop.max
        stem, unstemmed = _cached_stem(stemmer.stemfn, stemmer.cachesize), stemmer.ignore
        found = tokenizer.expression
        if found is default_pattern:  # (its twin without a group: findall gives whole words)
            words: Iterable[str] = map(str.lower, _DEFAULT_WORDS.findall(value))
        else:
            words = map(str.lower, map(_WHOLE_MATCH, found.finditer(value)))
        if longest is None:
            kept = [w for w in words if len(w) >= shortest and w not in stops]
        else:
            kept = [w for w in words if shortest <= len(w) <= longest and w not in stops]
        if unstemmed:
            return [w if w in unstemmed else stem(w) for w in kept]
        return list(map(stem, kept))

    def plain_chain(self) -> bool:
        """True when `index_terms` may index (the chain is StemmingAnalyzer's)."""
        return self._chain() is not None


class TermWeights(Frequency):
    """Whoosh's Frequency format with no value in a posting. A posting keeps its weight (the
    term's count in the field times the field's boost), which is all ranking reads
    (`bm25.Segments.postings`); Frequency also packed the count into a 4-byte value for
    every posting, kept as a list, pickled and compressed in each block of postings: a
    tenth of the index writers' time at 100,000 notes."""

    posting_size = 0

    def fixed_value_size(self) -> int:
        return 0

    def word_values(self, value: Any, analyzer: Any, **kwargs: Any) -> Any:
        return (
            (text, n, weight, b"")
            for text, n, weight, _ in super().word_values(value, analyzer, **kwargs)
        )

    def decode_frequency(self, valuestring: bytes) -> int:
        raise NotImplementedError("TermWeights postings keep weights, not counts")

    def decode_weight(self, valuestring: bytes) -> float:
        raise NotImplementedError("TermWeights postings keep weights in the posting itself")

    def combine(self, vs: Any) -> bytes:
        return b""


class NoteText(TEXT):
    """Whoosh's TEXT field for term weights only (`phrase=False`, `TermWeights`), whose
    indexing counts the terms of `NoteAnalyzer.index_terms` at once, instead of making a
    token of each term through Whoosh's format: the same postings (a test compares the
    segments), and a tenth of an index build's time less."""

    def __init__(self, field_boost: float = 1.0, **kwargs: Any) -> None:
        super().__init__(phrase=False, field_boost=field_boost, **kwargs)
        self.format = TermWeights(field_boost=field_boost)

    def index(self, value: Any, **kwargs: Any) -> Any:
        ana, fmt = self.analyzer, self.format
        if (
            kwargs
            or not isinstance(value, str)
            or not isinstance(ana, NoteAnalyzer)
            or type(fmt) is not TermWeights
            or not ana.plain_chain()
        ):
            return super().index(value, **kwargs)
        boost = fmt.field_boost
        return [
            (term.encode("utf-8"), n, n * boost, b"")
            for term, n in Counter(ana.index_terms(value)).items()
        ]


_WHOLE_MATCH = operator.methodcaller("group")
_DEFAULT_WORDS = re.compile(r"[\w\*]+(?:\.?[\w\*]+)*")  # Whoosh's default_pattern, no group


@functools.cache
def _cached_stem(stemfn: Callable[[str], str], size: int) -> Callable[[str], str]:
    """The stem function with a cache of `size` words (one per function, for the process)."""
    return functools.lru_cache(maxsize=size if size > 0 else None)(stemfn)


def analyzer() -> Any:
    chain = StemmingAnalyzer(stoplist=STOP_WORDS, minsize=1, cachesize=200_000)
    return NoteAnalyzer(*chain.items)


def build_schema() -> Schema:
    ana = analyzer()
    return Schema(
        path=ID(stored=True, unique=True),
        id=ID(stored=True),
        type=ID(stored=True),
        category=ID(stored=True),
        scope=ID(stored=True),
        tags=KEYWORD(stored=True, commas=True, lowercase=True),
        archived=BOOLEAN(stored=True),
        private=BOOLEAN(),
        problem=BOOLEAN(),
        # NoteText: term weights only (no positions), several times cheaper to index
        title=NoteText(analyzer=ana, stored=True, field_boost=TEXT_FIELDS["title"]),
        aliases=NoteText(analyzer=ana, field_boost=TEXT_FIELDS["aliases"]),
        tagtext=NoteText(analyzer=ana, field_boost=TEXT_FIELDS["tagtext"]),
        body=NoteText(analyzer=ana),
        previously=NoteText(analyzer=ana, field_boost=TEXT_FIELDS["previously"]),
        slots=NoteText(analyzer=ana, field_boost=TEXT_FIELDS["slots"]),
        superseded=BOOLEAN(),
        summary=STORED(),
        row=COLUMN(VarBytesColumn()),
    )


def tag_terms(tags: list[str]) -> list[str]:
    """A hierarchical tag also answers for its parents: project/alpha -> project/alpha, project."""
    return unique(
        term
        for tag in tags
        for parts in [tag.split("/")]
        for i in range(len(parts), 0, -1)
        if (term := "/".join(parts[:i]))
    )


def _search_names(note: Note) -> list[str]:
    """Aliases, plus the file name when the title differs from it (people search by it)."""
    stem = PurePosixPath(note.path).stem
    return [*note.aliases, stem] if stem.lower() != note.title.lower() else list(note.aliases)


def summary(body: str, limit: int = SUMMARY_CHARS) -> str:
    """The start of the body, whitespace collapsed, for listings and MEMORY.md."""
    text = " ".join(body[: limit * 2].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def body_hash(body: str) -> str:
    """A short hash of a note's body: the same note under another path has the same one."""
    return hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def row(note: Note, private: bool | None = None) -> dict[str, Any]:
    """The per-note values listings, ranking, credit and MEMORY.md need, kept in a column
    so they can be read for every note at once without decompressing stored documents.
    `private`: no agent reads it (default: what its front matter says)."""
    return {
        "id": note.id,
        "path": note.path,
        "title": note.title,
        "type": note.type,
        "category": note.category,
        "scope": note.scope,
        "tags": note.tags,
        "aliases": note.aliases,
        "created": note.created,
        "updated": note.updated,
        "pinned": note.pinned,
        "credit": note.credit,
        "access_count": note.access_count,
        "last_accessed": note.last_accessed,
        "problem": note.problem,
        "archived": note.archived,
        "private": note.private if private is None else private,
        "source": note.source,
        "superseded": superseded(note),
        "conflict_of": conflict_of(note),
        "body_hash": body_hash(note.body),
        # decay runs from the last access (else the last update, else creation)
        "ref_ts": epoch(note.last_accessed or note.updated or note.created),
        "born_ts": epoch(note.created or note.updated),
        "stamp_ts": epoch(note.updated or note.created),
    }


def superseded(note: Note) -> bool:
    """The note is not current: a newer note states its fact anew (`superseded_by` in its
    front matter), or it is a conflict copy (another machine's text of a note, until the
    person keeps one side). Left out of what reaches an agent, ranked below the rest."""
    value = note.meta.get("superseded_by")
    return (bool(value) and not isinstance(value, bool)) or conflict_of(note) is not None


def conflict_of(note: Note) -> str | None:
    """The note a conflict copy holds another machine's text of (`conflict_of`)."""
    value = note.meta.get("conflict_of")
    return value if isinstance(value, str) and value else None


def slot_terms(note: Note, current: str) -> str:
    """The words naming the attributes the current fact lines vb wrote in an entity note
    fill (domain/capture/slots.py: "live location ..." for "User lives in Lisbon")."""
    if note.type != "entity":
        return ""
    # lazy: the slot table compiles its patterns on import (indexing pays it, `vb --help` not)
    from vault_brain.domain.capture.slots import filled, index_words
    from vault_brain.domain.capture.statements import first_person

    words = []
    for line in current.splitlines()[:MAX_SLOT_LINES]:
        stripped = line.strip()
        if not stripped.startswith("- ") or PROVENANCE not in stripped:
            continue  # only the fact lines vb wrote (about 0.1 ms a line to read)
        if found := filled(first_person(statement_of(stripped))):
            words.append(index_words(found.slot))
    return " ".join(unique(words))


def document(note: Note, private_paths: tuple[str, ...] = ()) -> dict[str, Any]:
    """The index document of a note. It is private (no agent path reads it) when its front
    matter says `private` or its path matches one of `private_paths` (STRATEGY.md)."""
    current, previously = split_previously(note.body)
    private = is_private(note.path, note.meta, private_paths)
    return {
        "path": note.path,
        "id": note.id,
        "type": note.type,
        "category": note.category,
        "scope": note.scope,
        "tags": ",".join(t.replace(",", " ") for t in tag_terms(note.tags)),
        "archived": note.archived,
        "private": private,
        "problem": note.problem is not None,
        "title": note.title,
        "aliases": " ".join(_search_names(note)),
        "tagtext": " ".join(t.replace("/", " ").replace("-", " ") for t in note.tags),
        "body": current,
        "previously": previously,
        "slots": slot_terms(note, current),
        "superseded": superseded(note),
        "summary": summary(current),
        "row": json.dumps(row(note, private), ensure_ascii=False, default=str).encode("utf-8"),
    }
