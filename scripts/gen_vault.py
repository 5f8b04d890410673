#!/usr/bin/env python3
"""Generate a deterministic synthetic vault_brain vault for benchmarks.

    python scripts/gen_vault.py OUT --notes 10000 --seed 42

OUT is first created with `vb init` (the real template: STRATEGY.md, entities/, episodes/,
git repo), then the notes are written directly as files (going through `vb add` would take
minutes). The same (notes, seed) always gives byte-identical notes.

Notes look like the ones vb writes and people edit by hand:

* entities/<people|projects|preferences>/<slug>.md and episodes/<YYYY-MM>/<slug>.md,
  id `<type>-<category>-<slug>`, type, category, title;
* tags in flow (`[a, b]`) or block (`- a`) style, some hierarchical (`project/alpha`);
* created/updated ISO datetimes with a UTC offset; on some notes credit (0..1),
  access_count, last_accessed; pinned on a few; aliases on some people and projects;
* a few hand-written notes with only a title and tags (vb derives the rest from the path);
* bodies of 50-400 words drawn from a fixed vocabulary with a Zipf-like distribution (so
  BM25 has common and rare terms to work with), in paragraphs and lists, with [[wikilinks]]
  to other notes of the vault.

Use as a module: `generate(Path("out"), notes=1000, seed=42)` and `sample_queries(200, seed=7)`.
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import itertools
import json
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Bump when the output changes, so cached benchmark vaults are regenerated.
GENERATOR_VERSION = 1

# ---------------------------------------------------------------------------
# Vocabulary: a fixed list ordered from most to least frequent. A few function words
# head the list (the analyzer drops them as stop words, as it does in real notes), then
# real words of an engineering team's notes, then pronounceable made-up words as the
# long tail of rare terms (project code names, jargon, identifiers).


def _words(text: str) -> list[str]:
    return text.split()


_FUNCTION_WORDS = _words("the to and of a in for is that on with we it this be as at by")

_REAL_WORDS = _words("""
team work project meeting note plan issue time user data model test change review
design build release update problem idea decision question code service api deploy
customer feature bug fix support feedback agent memory search index query result
latency cost budget deadline week month sprint goal metric report dashboard alert
incident outage database cache queue worker server client request response error
config setting policy access token session context prompt retrieval ranking score
credit vault file folder markdown link tag summary draft document spec proposal
roadmap milestone priority risk dependency owner handoff onboarding hiring interview
candidate manager engineer designer researcher analyst lead partner vendor contract
invoice pricing launch migration rollout rollback schedule calendar standup retro
planning demo workshop offsite conference paper experiment benchmark baseline dataset
training evaluation inference pipeline embedding vector cluster shard replica backup
restore snapshot storage bucket region network firewall certificate secret password
permission audit compliance privacy security threat patch upgrade version branch
merge commit repository ticket board backlog estimate velocity capacity throughput
availability reliability monitoring logging tracing profile memoryleak regression
performance optimization refactor cleanup debt architecture interface schema table
column field record event stream batch job cron trigger webhook callback integration
plugin extension editor terminal shell script notebook spreadsheet chart graph
frontend backend mobile desktop browser layout theme font color icon animation
accessibility localization translation language keyboard shortcut workflow habit
preference morning evening coffee tea lunch travel flight hotel visa weekend holiday
vacation family birthday gift book podcast music running cycling swimming climbing
garden recipe dinner restaurant apartment office remote hybrid commute laptop monitor
chair desk headphones microphone camera video call chat email thread channel message
reminder todo checklist habit journal reflection lesson mistake success failure win
concern blocker unblock escalate negotiate agree disagree approve reject postpone
prioritize delegate automate simplify measure compare investigate reproduce document
explain teach learn share mentor pair ship merge revert monitor tune scale shard
quickly carefully later tomorrow yesterday weekly monthly quarterly annual urgent
important optional critical minor major stable flaky slow fast cheap expensive
simple complex clear vague strict loose public private internal external legacy
modern alpha beta gamma delta omega phoenix atlas orion nova aurora zephyr falcon
""")

_SYLLABLES = _words(
    "ka lo me ta ri vo sun del mar tek nim bra qui zor pel fen gal hux ion jat "
    "kel mun nor oth pra rel sil tov urb vex wen yal zed cor dax eph fri glo"
)


def _build_vocabulary(size: int = 4000) -> list[str]:
    words: list[str] = []
    seen: set[str] = set()
    for word in [*_FUNCTION_WORDS, *_REAL_WORDS]:
        if word not in seen:
            seen.add(word)
            words.append(word)
    rng = random.Random(20240607)  # fixed: the vocabulary never depends on --seed
    while len(words) < size:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


VOCABULARY: list[str] = _build_vocabulary()
# Zipf-Mandelbrot weights: weight(rank) = 1 / (rank + 2.7) ** 1.07.
_CUM_WEIGHTS: list[float] = list(
    itertools.accumulate(1.0 / (rank + 2.7) ** 1.07 for rank in range(1, len(VOCABULARY) + 1))
)
# Words a query may use: no function words (they are stop words for the analyzer).
QUERY_WORDS_FROM = len(_FUNCTION_WORDS)

_FIRST_NAMES = _words("""
Alice Bruno Chloe Dmitri Elena Farid Grace Hiro Ines Jonas Keiko Liam Maya Nikolai Olga
Pedro Quinn Rosa Samir Tara Umar Vera Wen Ximena Yusuf Zoe Amara Bjorn Carmen Diego Emeka
Fatima Gustav Hana Ivan Julia Kofi Lena Mateo Nadia Oscar Priya Rafael Sofia Tomas Ulla
Viktor Wanda Yara Zain Anika Boris Clara Dario Esme Felix Greta Hugo Iris Jamal
""")
_LAST_NAMES = _words("""
Kovacs Moreau Nakamura Okafor Petrov Quintero Rossi Schmidt Tanaka Usman Varga Weber
Xu Yilmaz Zielinski Andersson Bianchi Castillo Dubois Eriksen Fischer Garcia Haddad
Ivanova Jensen Kim Lindqvist Mendes Novak Oliveira Park Ramos Silva Takahashi Uddin
Vidal Wagner Yamamoto Zhang Abe Brandt Costa Diaz Engel Ferreira Gomez Horvat Ito Jung
Kaur Larsen Muller Nguyen Ortiz Popescu Reyes Santos Torres Urbina Volkov Walsh
""")
_EPISODE_KINDS = (
    "Standup",
    "Debugging session",
    "Design review",
    "Call with",
    "Retro",
    "Incident",
    "Pairing",
    "Planning",
    "Customer call",
    "Interview",
    "Demo",
    "Research notes",
)
_FLAT_TAGS = (
    "meeting",
    "decision",
    "bug",
    "idea",
    "followup",
    "infra",
    "ml",
    "frontend",
    "backend",
    "ops",
    "research",
    "personal",
    "urgent",
    "docs",
    "hiring",
    "security",
    "perf",
    "travel",
)
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "none", "y", "n", "~"}
_START = dt.datetime(2023, 1, 1, tzinfo=dt.UTC)
_SPAN_SECONDS = int((dt.datetime(2025, 6, 30, tzinfo=dt.UTC) - _START).total_seconds())
_OFFSETS = (dt.timedelta(0), dt.timedelta(hours=1), dt.timedelta(hours=2), dt.timedelta(hours=-5))


@dataclass
class NoteSpec:
    rel: str
    id: str
    type: str
    category: str
    title: str
    slug: str
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)


@dataclass
class GeneratedVault:
    root: Path
    seed: int
    notes: list[NoteSpec]
    words: int
    seconds: float


# ---------------------------------------------------------------------------
# helpers


def slugify(text: str) -> str:
    """Same rules as vault_brain.vault.notes.slugify for ASCII titles."""
    out: list[str] = []
    for ch in text.lower():
        if ch.isalnum():
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")[:80].strip("-") or "untitled"


def zipf_words(rng: random.Random, k: int, start: int = 0) -> list[str]:
    """k words drawn with Zipf-like frequencies (optionally skipping the first `start` ranks)."""
    if start <= 0:
        return rng.choices(VOCABULARY, cum_weights=_CUM_WEIGHTS, k=k)
    low = _CUM_WEIGHTS[start - 1]
    high = _CUM_WEIGHTS[-1]
    out = []
    for _ in range(k):
        x = low + rng.random() * (high - low)
        out.append(VOCABULARY[min(bisect.bisect_right(_CUM_WEIGHTS, x), len(VOCABULARY) - 1)])
    return out


def sample_queries(n: int, seed: int = 7) -> list[str]:
    """n deterministic queries of 1-4 distinct vocabulary words (no stop words)."""
    rng = random.Random(seed)
    queries: list[str] = []
    for _ in range(n):
        size = rng.choice((1, 1, 2, 2, 2, 3, 3, 4))
        words: list[str] = []
        while len(words) < size:
            word = zipf_words(rng, 1, start=QUERY_WORDS_FROM)[0]
            if word not in words:
                words.append(word)
        queries.append(" ".join(words))
    return queries


def _yaml_scalar(text: str) -> str:
    plain = text.replace(" ", "").replace("-", "").replace("/", "").replace(".", "").isalnum()
    if plain and text.lower() not in _RESERVED and not text[0].isdigit():
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _iso(moment: dt.datetime, rng: random.Random) -> str:
    offset = rng.choice(_OFFSETS)
    return moment.astimezone(dt.timezone(offset)).replace(microsecond=0).isoformat()


def _yaml_list(key: str, items: Sequence[str], block: bool) -> list[str]:
    if block and items:
        return [f"{key}:"] + [f"  - {_yaml_scalar(item)}" for item in items]
    return [f"{key}: [{', '.join(_yaml_scalar(item) for item in items)}]"]


def _unique(slug: str, taken: set[str]) -> str:
    candidate, n = slug, 2
    while candidate in taken:
        candidate = f"{slug}-{n}"
        n += 1
    taken.add(candidate)
    return candidate


# ---------------------------------------------------------------------------
# plan: who the notes are, before any body is written (bodies link to any note)


def _plan(rng: random.Random, count: int) -> list[tuple[NoteSpec, dt.datetime]]:
    taken: dict[str, set[str]] = {}
    project_names: list[str] = []
    plan: list[tuple[NoteSpec, dt.datetime]] = []
    for _ in range(count):
        created = _START + dt.timedelta(seconds=rng.randrange(_SPAN_SECONDS))
        roll = rng.random()
        aliases: list[str] = []
        if roll < 0.12:
            type_, category = "entity", "people"
            first, last = rng.choice(_FIRST_NAMES), rng.choice(_LAST_NAMES)
            title = f"{first} {last}"
            if rng.random() < 0.3:
                aliases = [first, f"{first[0]}{last[0]}"][: rng.randint(1, 2)]
        elif roll < 0.22:
            type_, category = "entity", "projects"
            word = zipf_words(rng, 1, start=QUERY_WORDS_FROM + 50)[0]
            title = f"Project {word.capitalize()}"
            project_names.append(word)
            if rng.random() < 0.2:
                aliases = [word.capitalize()]
        elif roll < 0.30:
            type_, category = "entity", "preferences"
            a, b = zipf_words(rng, 2, start=QUERY_WORDS_FROM)
            title = f"Prefers {a} over {b}"
        else:
            type_, category = "episode", "general"
            kind = rng.choice(_EPISODE_KINDS)
            if kind == "Call with":
                topic = f"{rng.choice(_FIRST_NAMES)} {rng.choice(_LAST_NAMES)}"
            else:
                topic = " ".join(zipf_words(rng, rng.randint(1, 3), start=QUERY_WORDS_FROM))
            title = f"{kind} {'about ' if kind != 'Call with' else ''}{topic}"
        slug = _unique(slugify(title), taken.setdefault(f"{type_}-{category}", set()))
        folder = f"entities/{category}" if type_ == "entity" else f"episodes/{created:%Y-%m}"
        tags: list[str] = []
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 4))):
            pick = rng.random()
            if pick < 0.55:
                tag = rng.choice(_FLAT_TAGS)
            elif pick < 0.8 and project_names:
                tag = f"project/{rng.choice(project_names)}"
            elif pick < 0.9:
                tag = f"team/{rng.choice(('platform', 'search', 'growth', 'infra', 'ml'))}"
            else:
                tag = f"topic/{zipf_words(rng, 1, start=QUERY_WORDS_FROM)[0]}"
            if tag not in tags:
                tags.append(tag)
        spec = NoteSpec(
            rel=f"{folder}/{slug}.md",
            id=f"{type_}-{category}-{slug}",
            type=type_,
            category=category,
            title=title,
            slug=slug,
            tags=tags,
            aliases=aliases,
        )
        plan.append((spec, created))
    return plan


def _front_matter(spec: NoteSpec, created: dt.datetime, rng: random.Random) -> list[str]:
    block = rng.random() < 0.4
    if rng.random() < 0.03:  # hand-written: vb derives id, type and category from the path
        return [
            "---",
            f"title: {_yaml_scalar(spec.title)}",
            *_yaml_list("tags", spec.tags, block),
            "---",
        ]
    updated = min(
        created + dt.timedelta(seconds=rng.randrange(120 * 86400)),
        _START + dt.timedelta(seconds=_SPAN_SECONDS),
    )
    lines = [
        "---",
        f"id: {spec.id}",
        f"type: {spec.type}",
        f"category: {spec.category}",
        f"title: {_yaml_scalar(spec.title)}",
        *_yaml_list("tags", spec.tags, block),
        f"created: {_iso(created, rng)}",
        f"updated: {_iso(updated, rng)}",
    ]
    if spec.aliases:
        lines += _yaml_list("aliases", spec.aliases, rng.random() < 0.5)
    if rng.random() < 0.4:
        last = updated + dt.timedelta(seconds=rng.randrange(60 * 86400))
        lines += [
            f"credit: {round(rng.random(), 3)}",
            f"access_count: {rng.randint(0, 50)}",
            f"last_accessed: {_iso(last, rng)}",
        ]
    if rng.random() < 0.02:
        lines.append("pinned: true")
    lines.append("---")
    return lines


def _body(spec: NoteSpec, rng: random.Random, notes: list[NoteSpec]) -> tuple[str, int]:
    total = int(rng.triangular(50, 400, 120))
    words = zipf_words(rng, total)
    links = rng.choice((0, 1, 1, 2, 2, 3, 4))
    link_at = set(rng.sample(range(total), min(links, total)))
    parts: list[str] = []
    if rng.random() < 0.25:
        parts.append(f"## {rng.choice(('Context', 'Notes', 'Summary', 'Details'))}\n\n")
    sentence: list[str] = []
    length = rng.randint(6, 18)
    in_list = False
    for i, word in enumerate(words):
        if i in link_at:
            other = notes[rng.randrange(len(notes))]
            if other is not spec:
                word = (
                    f"[[{other.slug}|{other.title}]]" if rng.random() < 0.3 else f"[[{other.slug}]]"
                )
        sentence.append(word)
        if len(sentence) >= length or i == total - 1:
            text = " ".join(sentence)
            text = text[0].upper() + text[1:]
            if in_list:
                parts.append(f"- {text}\n")
            else:
                parts.append(text + ".")
                parts.append("\n\n" if rng.random() < 0.25 else " ")
            sentence = []
            length = rng.randint(6, 18)
            if rng.random() < 0.08:
                in_list = not in_list
                parts.append("\n" if in_list else "\n\n")
    text = "\n".join(line.rstrip() for line in "".join(parts).strip().split("\n"))
    return text + "\n", total


# ---------------------------------------------------------------------------
# public API


def vb_command() -> list[str]:
    """How to run the `vb` of this interpreter's environment."""
    exe = Path(sys.executable).parent / "vb"
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("vb")
    if found:
        return [found]
    return [sys.executable, "-m", "vault_brain"]


def init_vault(out: Path, timeout: float = 120.0) -> None:
    """`vb init OUT`; raises RuntimeError with vb's message if it fails."""
    try:
        proc = subprocess.run(
            [*vb_command(), "init", str(out)],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"`vb init {out}` did not finish in {timeout:.0f}s") from exc
    except OSError as exc:
        raise RuntimeError(
            f"cannot run vb ({exc}); is the venv installed? try `make venv`"
        ) from exc
    if proc.returncode != 0:
        raise RuntimeError(
            f"`vb init {out}` failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()}"
        )


def generate(
    out: Path, notes: int, seed: int = 42, *, force: bool = False, init: bool = True
) -> GeneratedVault:
    """Create a vault at `out` with `notes` synthetic notes. `force` removes `out` first."""
    if notes < 1:
        raise ValueError("notes must be >= 1")
    started = time.perf_counter()
    out = out.expanduser().resolve()
    if out.exists() and any(out.iterdir()):
        if not force:
            raise FileExistsError(f"{out} exists and is not empty (use --force to replace it)")
        shutil.rmtree(out)
    if init:
        init_vault(out)
    else:
        out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    plan = _plan(rng, notes)
    specs = [spec for spec, _ in plan]
    made: set[Path] = set()
    words = 0
    for spec, created in plan:
        folder = (out / spec.rel).parent
        if folder not in made:
            folder.mkdir(parents=True, exist_ok=True)
            made.add(folder)
        head = _front_matter(spec, created, rng)
        body, count = _body(spec, rng, specs)
        words += count
        (out / spec.rel).write_text("\n".join(head) + "\n" + body, encoding="utf-8")
    return GeneratedVault(out, seed, specs, words, time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="folder for the new vault (must be empty or absent)")
    parser.add_argument("--notes", type=int, default=1000, help="how many notes (default 1000)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument("--force", action="store_true", help="delete OUT first if it exists")
    parser.add_argument(
        "--no-init",
        action="store_true",
        help="write notes only, without `vb init` (no STRATEGY.md, no git)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    args = parser.parse_args(argv)
    try:
        result = generate(args.out, args.notes, args.seed, force=args.force, init=not args.no_init)
    except (FileExistsError, RuntimeError, ValueError, OSError) as exc:
        print(f"gen_vault: error: {exc}", file=sys.stderr)
        return 2
    summary = {
        "root": str(result.root),
        "notes": len(result.notes),
        "seed": result.seed,
        "words": result.words,
        "seconds": round(result.seconds, 3),
        "generator_version": GENERATOR_VERSION,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"generated {len(result.notes)} notes ({result.words} words) in {result.root} "
            f"in {result.seconds:.1f}s (seed {result.seed})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
