"""The MCP tools' parameter types, with the limits and descriptions clients see.

At module level so the SDK resolves them when it reads the tools' signatures."""

from typing import Annotated, Literal

from pydantic import Field

NoteType = Annotated[
    Literal["entity", "episode"],
    Field(description="entity: a durable fact (person, project, preference); episode: an event."),
]
Category = Annotated[
    str,
    Field(
        max_length=80,
        description="For entities: people, projects, preferences or your own; episodes may "
        "leave it empty.",
    ),
]
Name = Annotated[
    str, Field(min_length=1, max_length=200, description="Short title; also the file name.")
]
Content = Annotated[
    str,
    Field(
        min_length=1,
        description="The memory, in Markdown: a fact in a few sentences (at most 16,000 "
        "characters; a longer one is refused before it is read).",
    ),
]
Tags = Annotated[
    list[Annotated[str, Field(max_length=100)]] | None,
    Field(max_length=50, description="Tags without '#', e.g. ['work', 'q3'] (at most 50)."),
]
NoteRef = Annotated[
    str,
    Field(min_length=1, max_length=500, description="A note id (from memory_search) or its path."),
]
Query = Annotated[str, Field(min_length=1, max_length=2000, description="Words to find.")]
SearchType = Annotated[
    Literal["entity", "episode", "note"] | None,
    Field(description="Only this type (note: hand-made notes outside entities/ and episodes/)."),
]
Scope = Annotated[
    str | None,
    Field(
        max_length=200,
        description="Whose memory: global, user:<id>, chat:<channel>:<id> or agent:<name> "
        "(search: comma-separate several, or all). Default: store global (an agent's own "
        "scope when the server runs as an agent), search every scope you may read.",
    ),
]
SearchIn = Annotated[
    list[Literal["memory", "items", "sessions", "sources"]] | None,
    Field(
        description="What to search: memory (notes), items (extracted from project files, "
        "cited to file and line), sources (the projects' files), sessions (transcripts). "
        "Default: search_in in the vault's STRATEGY.md (memory).",
    ),
]
Limit = Annotated[int, Field(ge=1, le=100, description="How many results.")]
TopN = Annotated[int, Field(ge=1, le=100, description="How many from each end.")]
Reason = Annotated[str | None, Field(max_length=300, description="Why; kept in the note.")]
Signal = Annotated[
    Literal["good", "bad", "completed", "abandoned", "tool-success"],
    Field(
        description="good: the memories helped; bad: the user corrected you; completed: the "
        "task succeeded; abandoned: it was given up; tool-success: a tool call worked."
    ),
]
PersonaAction = Annotated[
    Literal["list", "create", "switch"],
    Field(
        description="list: the personas (git branches of the vault), the current one marked; "
        "create: a new persona from the current one; switch: check it out (pending changes "
        "are committed first; search then sees that persona's notes)."
    ),
]
PersonaName = Annotated[
    str | None,
    Field(max_length=100, description="The persona (create, switch), e.g. 'work-assistant'."),
]
