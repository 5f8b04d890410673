"""Lifecycle rules as code: `policy/rules.yaml` holds, per step, a true/false expression over a
note's fields that decides which notes the step takes (see `RULE_DOCS` and README).

An expression is parsed with Python's `ast` module and checked against a whitelist before it is
ever evaluated; evaluation walks the checked tree itself (no `eval`, no `compile`). Allowed:
`and`/`or`/`not`, comparisons (chained too) and `in`/`not in`, arithmetic on numbers
(`+ - * / %` and unary `-`), the note fields in `FIELDS`, constants (strings, numbers,
true/false, None), list and tuple literals, and the pure functions in `FUNCTIONS`. Anything
else (attribute access, subscripts, other calls, lambdas, comprehensions, `**`, walrus...) is
refused, and so is an expression over `MAX_CHARS` characters or `MAX_NODES` tree nodes.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

STEPS = ("consolidate", "promote", "prune")
MAX_CHARS = 500
MAX_NODES = 120

# The fields a rule may name: name -> (type, meaning). Every rule sees every field.
FIELDS: dict[str, tuple[type, str]] = {
    "id": (str, "the note's id, e.g. episode-general-standup"),
    "path": (str, "its path in the vault, e.g. episodes/2026-05/standup.md"),
    "title": (str, "its title"),
    "type": (str, "entity or episode"),
    "category": (str, "its category, e.g. people, projects, general"),
    "tags": (list, "its tags (a list of strings)"),
    "scope": (str, "its scope: global, user:..., chat:..., agent:..."),
    "pinned": (bool, "true when pinned"),
    "scored": (bool, "true once an outcome signal has moved its credit"),
    "credit": (float, "stored credit, 0..1"),
    "effective": (float, "credit decayed since the last access, 0..1"),
    "access_count": (int, "how many times an agent retrieved it"),
    "age_days": (float, "days since it was created (or updated, when created is unknown)"),
}
# Names that are constants rather than fields.
_CONSTANTS = {"True": True, "False": False, "None": None, "true": True, "false": False}


def _lower(value: Any) -> Any:
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, list | tuple):
        return [v.lower() if isinstance(v, str) else v for v in value]
    raise RuleError("lower() takes a string or a list of strings")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _numbers(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        if not args or not all(_number(a) for a in args):
            raise RuleError(f"{name}() takes numbers")
        return fn(*args)

    return call


def _len(value: Any) -> int:
    if not isinstance(value, str | list | tuple):
        raise RuleError("len() takes a string or a list")
    return len(value)


FUNCTIONS: dict[str, tuple[Callable[..., Any], int, str]] = {
    "len": (_len, 1, "len(tags): length of a list or string"),
    "lower": (_lower, 1, "lower(title): a string (or each string of a list) in lower case"),
    "abs": (_numbers("abs", abs), 1, "abs(x): absolute value"),
    "min": (_numbers("min", min), -1, "min(a, b, ...): smallest number"),
    "max": (_numbers("max", max), -1, "max(a, b, ...): largest number"),
}

_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_OP_NAMES = {ast.Pow: "**", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<"}


class RuleError(ValueError):
    """An expression that is not allowed, or that failed on a note (the message says why)."""


class RangeError(RuleError):
    """A number went wrong on one note (division by zero, overflow): not a fault of the rule's
    form, so checking it on a sample note does not refuse it."""


@dataclass(frozen=True)
class Rule:
    """One step's checked expression; `matches(note)` evaluates it on a note's fields."""

    step: str
    source: str
    tree: ast.Expression = field(compare=False, repr=False)

    def matches(self, note: Mapping[str, Any]) -> bool:
        value = _eval(self.tree.body, note)
        if not isinstance(value, bool):
            raise RuleError(f"gave {value!r}, not true or false")
        return value


@dataclass(frozen=True)
class RuleSet:
    """The rules of the steps that have one; a step without a rule keeps vb's own choice."""

    rules: Mapping[str, Rule] = field(default_factory=dict)

    def get(self, step: str) -> Rule | None:
        return self.rules.get(step)


NO_RULES = RuleSet()


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"attribute access (.{node.attr})"
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name):
            return f"the call {node.func.id}() (functions: {', '.join(FUNCTIONS)})"
        return _describe(node.func) if isinstance(node.func, ast.Attribute) else "a call"
    if isinstance(node, ast.BinOp):
        return f"the operator {_OP_NAMES.get(type(node.op), type(node.op).__name__)}"
    names = {
        ast.Subscript: "subscripts ([...])",
        ast.Lambda: "lambda",
        ast.ListComp: "comprehensions",
        ast.SetComp: "comprehensions",
        ast.DictComp: "comprehensions",
        ast.GeneratorExp: "comprehensions",
        ast.NamedExpr: "assignment (:=)",
        ast.IfExp: "if/else",
        ast.JoinedStr: "f-strings",
    }
    return names.get(type(node), type(node).__name__)


def _check(node: ast.AST) -> None:
    """Refuse anything outside the whitelist (raises RuleError naming the construct)."""
    if isinstance(node, ast.BoolOp | ast.Compare | ast.List | ast.Tuple):
        if isinstance(node, ast.Compare) and any(type(op) not in _COMPARE for op in node.ops):
            raise RuleError("uses a comparison that is not allowed (is / is not)")
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.Not | ast.USub | ast.UAdd):
            raise RuleError("uses the operator ~")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _ARITH:
            raise RuleError(f"uses {_describe(node)}, which is not allowed")
    elif isinstance(node, ast.Name):
        if node.id not in FIELDS and node.id not in _CONSTANTS:
            raise RuleError(f"names {node.id!r}, which is not a note field")
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, str | int | float | bool | type(None)):
            raise RuleError(f"uses the constant {node.value!r}")
    elif isinstance(node, ast.Call):
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in FUNCTIONS:
            raise RuleError(f"uses {_describe(node)}, which is not allowed")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise RuleError(f"passes keyword or * arguments to {func.id}()")
        arity = FUNCTIONS[func.id][1]
        if (arity >= 0 and len(node.args) != arity) or (arity < 0 and not node.args):
            raise RuleError(f"calls {func.id}() with {len(node.args)} argument(s)")
        for arg in node.args:
            _check(arg)
        return
    elif not isinstance(node, ast.Load | ast.boolop | ast.cmpop | ast.operator | ast.unaryop):
        raise RuleError(f"uses {_describe(node)}, which is not allowed")
    for child in ast.iter_child_nodes(node):
        _check(child)


def parse_rule(step: str, source: Any) -> Rule:
    """A step's expression, checked; RuleError says what is wrong (never evaluates it)."""
    if step not in STEPS:
        raise RuleError(f"unknown step {step!r} (steps: {', '.join(STEPS)})")
    if not isinstance(source, str) or not source.strip():
        raise RuleError('expected an expression in quotes, e.g. "effective < 0.1 and not pinned"')
    if len(source) > MAX_CHARS:
        raise RuleError(f"is {len(source)} characters long (at most {MAX_CHARS})")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise RuleError(f"is not a valid expression ({exc.msg})") from None
    except (ValueError, RecursionError, MemoryError):  # a NUL byte; nesting too deep
        raise RuleError("is not a valid expression") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise RuleError(f"is too complex (over {MAX_NODES} parts)")
    _check(tree.body)
    rule = Rule(step, source.strip(), tree)
    try:
        rule.matches(SAMPLE_NOTE)  # types: a rule must give true or false on a plain note
    except RangeError:
        pass
    except RuleError as exc:
        raise RuleError(f"on a sample note {exc}") from None
    return rule


def parse_rules(data: Any) -> RuleSet:
    """rules.yaml's mapping (step -> expression) -> a RuleSet; RuleError names the step."""
    if data is None:
        return NO_RULES
    if not isinstance(data, Mapping):
        raise RuleError('expected a mapping of step: expression, e.g. prune: "effective < 0.1"')
    rules: dict[str, Rule] = {}
    for step, source in data.items():
        if step == "version":
            continue
        try:
            rules[str(step)] = parse_rule(str(step), source)
        except RuleError as exc:
            raise RuleError(f"{step}: {exc}") from None
    return RuleSet(rules)


SAMPLE_NOTE: dict[str, Any] = {
    "id": "episode-general-sample",
    "path": "episodes/2026-01/sample.md",
    "title": "Sample",
    "type": "episode",
    "category": "general",
    "tags": ["sample"],
    "scope": "global",
    "pinned": False,
    "scored": True,
    "credit": 0.5,
    "effective": 0.5,
    "access_count": 1,
    "age_days": 30.0,
}


def note_fields(row: Mapping[str, Any], age_days: float | None) -> dict[str, Any]:
    """The fields a rule sees, from a note's index row (as the lifecycle reads it)."""
    return {
        "id": str(row.get("id") or ""),
        "path": str(row.get("path") or ""),
        "title": str(row.get("title") or ""),
        "type": str(row.get("type") or ""),
        "category": str(row.get("category") or ""),
        "tags": [str(t) for t in row.get("tags") or []],
        "scope": str(row.get("scope") or "global"),
        "pinned": bool(row.get("pinned")),
        "scored": bool(row.get("scored")),
        "credit": float(row.get("credit") or 0.0),
        "effective": float(row.get("effective") or 0.0),
        "access_count": int(row.get("access_count") or 0),
        "age_days": float(age_days) if age_days is not None else 0.0,
    }


# --------------------------------------------------------------------------- evaluation


def _eval(node: ast.AST, note: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        value: Any = is_and
        for part in node.values:
            value = _eval(part, note)
            if bool(value) != is_and:
                return value
        return value
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, note)
        if isinstance(node.op, ast.Not):
            return not operand
        if not _number(operand):
            raise RuleError(f"cannot negate {operand!r}")
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, note), _eval(node.right, note)
        if not (_number(left) and _number(right)):
            raise RuleError(f"arithmetic on {left!r} and {right!r} (numbers only)")
        try:
            out = _ARITH[type(node.op)](left, right)
        except ZeroDivisionError:
            raise RangeError("divides by zero") from None
        except OverflowError:
            raise RangeError("gave a number out of range") from None
        if isinstance(out, float) and not math.isfinite(out):
            raise RangeError("gave a number out of range")
        return out
    if isinstance(node, ast.Compare):
        left = _eval(node.left, note)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, note)
            if not _compare(op, left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        return note[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_eval(e, note) for e in node.elts]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return FUNCTIONS[node.func.id][0](*(_eval(a, note) for a in node.args))
    raise RuleError(f"uses {_describe(node)}, which is not allowed")  # checked before: unreachable


def _compare(op: ast.cmpop, left: Any, right: Any) -> bool:
    if isinstance(op, ast.In | ast.NotIn):
        if not isinstance(right, str | list | tuple):
            raise RuleError(f"'in' needs a list or string on its right, not {right!r}")
        if isinstance(right, str) and not isinstance(left, str):
            raise RuleError(f"cannot look for {left!r} in a string")
    elif not isinstance(op, ast.Eq | ast.NotEq):
        both_numbers = _number(left) and _number(right)
        both_strings = isinstance(left, str) and isinstance(right, str)
        if not (both_numbers or both_strings):
            raise RuleError(f"cannot order {left!r} and {right!r}")
    return bool(_COMPARE[type(op)](left, right))
