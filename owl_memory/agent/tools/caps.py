"""The caps every tool call is held to: return size, listing and argument limits, and the checks that enforce them.

A tool's return is cut to MAX_RETURN serialized characters (`fit`); its arguments are bound and checked here, and an
error message never echoes a long argument back (`scrub`).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ...errors import CapExceeded, ToolError, UnknownItem
from ...model import CallArgs
from ..leakage import K, covered_segments, kgrams

MAX_RETURN = 2_000  # serialized characters one tool return may take
MAX_LIST = 50  # entries one listing may return
MAX_CALLS = 400  # tool calls one run may make
MAX_ARG = 4_000  # characters of a string argument (a pattern, a query)
LARGE_RETURN = 1_000  # a return above this many serialized characters counts as large
_KIND = {"integer": "an integer", "string": "a string", "number": "a number", "boolean": "true or false",
         "array": "a list", "object": "a dict"}  # JSON-schema types as the fix-it message names them


def dumps(value: object) -> str:
    """The serialized form a tool return is measured by."""
    return json.dumps(value, ensure_ascii=False, default=str)


def is_error(value: object) -> bool:
    """Whether a tool return is an "[Error] …" observation (a recoverable failure), not a result."""
    return isinstance(value, str) and value.startswith("[Error]")


def clip(text: object, n: int = 200) -> str:
    """A string cut to n characters, marked with … when cut."""
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


def as_int(value: object, name: str) -> int:
    """An integer argument (numeric strings accepted, bools and None refused); ToolError otherwise."""
    if isinstance(value, bool) or value is None:
        raise ToolError(f"{name} must be an integer")
    try:
        if not isinstance(value, int | float | str):
            raise TypeError(type(value).__name__)
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ToolError(f"{name} must be an integer, e.g. {name}=0") from None


def as_text(value: object, name: str) -> str:
    """A string argument of at most MAX_ARG characters ("" for None); ToolError otherwise."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string")
    if len(value) > MAX_ARG:
        raise ToolError(f"{name} is {len(value)} characters; the limit is {MAX_ARG}")
    return value


def as_count(value: object, name: str, most: int) -> int:
    """A count of 1..most: above `most` it is capped (as every listing is); below 1, a ToolError naming the range."""
    n = as_int(value, name)
    if n < 1:
        raise ToolError(f"{name} must be 1 to {most}, e.g. {name}={min(5, most)}")
    return min(n, most)


def as_limit(value: object) -> int:
    """A listing limit clamped to 1..MAX_LIST."""
    return max(1, min(as_int(value, "limit"), MAX_LIST))


def bind(fn: Callable, args: tuple, kwargs: dict) -> inspect.BoundArguments:
    """Bind a call to fn's signature; ToolError names the expected signature (values never echoed)."""
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError as e:
        raise ToolError(f"bad arguments ({e}); call it as {fn.__name__}{signature(fn)}") from None
    bound.apply_defaults()
    return bound


def signature(fn: Callable) -> str:
    """The parameter list of a tool, as the model should call it: (start: int = 0, length: int = 512)."""
    def show(p: inspect.Parameter) -> str:
        ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", p.annotation)
        text = p.name if p.annotation is inspect.Parameter.empty else f"{p.name}: {ann}"
        return text if p.default is inspect.Parameter.empty else f"{text} = {p.default!r}"

    return "(" + ", ".join(show(p) for p in inspect.signature(fn).parameters.values()) + ")"


def argument_problem(e: Exception, schema: dict) -> str:
    """What was wrong with the arguments (from dspy's check), without echoing their values."""
    m = re.search(r"Arg (\w+) is invalid", str(e))
    if m:
        name = m.group(1)
        want = _KIND.get(str((schema.get(name) or {}).get("type")), "of the type shown")
        return f"argument {name!r} has the wrong type: {name} must be {want}"
    return f"bad arguments ({type(e).__name__}); pass the arguments shown, by position or by name"


def fit(value: Any) -> Any:
    """The value if its serialized form fits MAX_RETURN; else trimmed (text, then longest lists) and flagged."""
    if len(dumps(value)) <= MAX_RETURN:
        return value
    if isinstance(value, dict):
        value = dict(value)
        while len(dumps(value)) > MAX_RETURN and _shrink(value):
            value["truncated"] = True
        if len(dumps(value)) <= MAX_RETURN:
            return value
    raise CapExceeded(f"the result is larger than {MAX_RETURN} characters; ask for fewer items (smaller limit or n)")


def _shrink(value: dict) -> bool:
    """Cut the window text or the longest list of a dict once; False when nothing is left to cut."""
    if isinstance(value.get("text"), str) and value["text"]:
        value["text"] = value["text"][: len(value["text"]) * 3 // 4]
        value["end"] = value.get("start", 0) + len(value["text"])
        return True
    lists = [(len(v), k) for k, v in value.items() if isinstance(v, list) and v]
    if lists:
        _, key = max(lists)
        value[key] = value[key][: len(value[key]) * 3 // 4]
        return True
    strings = [(len(v), k) for k, v in value.items() if isinstance(v, str) and len(v) > 40]
    if strings:
        _, key = max(strings)
        value[key] = clip(value[key], len(value[key]) // 2)
        return True
    return False


def strings(value: object) -> Iterator[str]:
    """Every string inside a JSON-compatible value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def describe_args(args: tuple, kwargs: dict) -> CallArgs:
    """Arguments for the trajectory: short values as they are, long strings clipped with their length."""
    def show(v: Any) -> Any:
        if isinstance(v, str) and len(v) > 120:
            return {"clipped": clip(v, 120), "chars": len(v)}
        return v if isinstance(v, int | float | bool | type(None)) or isinstance(v, str) else clip(dumps(v), 120)

    return CallArgs(tuple(show(a) for a in args), {str(k): show(v) for k, v in kwargs.items()})


def scrub(message: str, args: tuple, kwargs: dict, k: int = K) -> str:
    """An error message with every run of k+ characters copied from a string argument replaced by <argument>."""
    for a in [*args, *kwargs.values()]:
        if isinstance(a, str) and len(a) >= k:
            for segment in sorted(set(covered_segments(message, kgrams(a, k), k)), key=len, reverse=True):
                message = message.replace(segment, "<argument>")
    return message


def error_message(e: Exception) -> str:
    """An exception's message without KeyError's quoting."""
    return str(e.args[0]) if isinstance(e, KeyError) and e.args and not isinstance(e, UnknownItem) else str(e)
