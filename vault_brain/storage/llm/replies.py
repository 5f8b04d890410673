"""The shapes the model's JSON replies must have, one per LLM-backed step (pydantic).

A reply that does not fit gets one corrective retry, then fails as an `LLMError`, and the step
falls back to its offline method: a malformed or hostile reply never reaches a note. What the
text inside says is the gate's business (`domain.gate`), not the schema's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Fact(_Reply):
    subject: str = ""
    category: str
    statement: str = Field(min_length=1)
    confidence: float | str | None = None


class FactsReply(_Reply):
    facts: list[_Fact]


class SummaryReply(_Reply):
    summary: str = Field(min_length=1)
    decisions: list[str] = []
    facts: list[str] = []
    open_questions: list[str] = []
    names: list[str] = []


class MergeReply(_Reply):
    title: str = Field(min_length=1)
    body: str = Field(min_length=1)


class _Operation(_Reply):
    fact: int
    op: Literal["ADD", "UPDATE", "DELETE", "NONE", "add", "update", "delete", "none"]
    id: str | None = None
    old: str | None = None
    reason: str | None = None


class ReconcileReply(_Reply):
    operations: list[_Operation]


class _Item(_Reply):
    type: Literal["decision", "claim", "task", "entity", "note"]
    title: str = Field(min_length=1, max_length=200)
    content: str = Field(min_length=1, max_length=2000)
    line: int = Field(ge=1)
    confidence: float = Field(default=0.7, ge=0, le=1)


class ItemsReply(_Reply):
    items: list[_Item]


REPLIES: dict[str, type[_Reply]] = {
    "facts": FactsReply,
    "summary": SummaryReply,
    "merge": MergeReply,
    "reconcile": ReconcileReply,
    "items": ItemsReply,
}


def validate_reply(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` checked against the shape of reply `kind`; raises pydantic's ValidationError."""
    return REPLIES[kind].model_validate(data).model_dump()
