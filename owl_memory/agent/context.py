"""Context layers (a layer cake L0-L3): bounded, deterministic text computed from the ontology, memory and a guide.

L0 is a sense card of the ontology, L1 its schema card with memory's anti-patterns (both read off the ontology's
own triples by agent/ontology_cards.py), L3 an extractive summary of a guide. L2 (memory text injected into the
prompt) is condition A1, not a layer here.
Each layer is cut at a line boundary to its bound in characters; the same inputs always give the same text.
The runner hands each layer to the RLM as its own input variable (FIELDS), whose preview the model sees whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rdflib import Graph

from ..errors import ConfigError
from ..model import LayerBrief
from ..model.runs import MAX_BUDGET, parse_layers
from .endpoint_profiles import find_profile, summary
from .ontology_cards import schema_lines, sense_lines

if TYPE_CHECKING:
    from ..store import Memory

BOUNDS = {"L0": 600, "L1": 1000, "L3": 1000}
FIELDS = {"L0": "ontology_card", "L1": "schema_constraints", "L3": "guide_summary"}  # the RLM's input variables
MAX_BOUND = MAX_BUDGET  # dspy.RLM previews each input variable up to 1,000 characters: a layer is seen whole


@dataclass(frozen=True)
class Layer:
    """One packed layer.

    Args:
        name: L0, L1 or L3.
        text: the layer as the model sees it (at most `bound` characters).
        bound: the character bound it was packed to.
        dropped: lines left out to stay within the bound.
    """

    name: str
    text: str
    bound: int
    dropped: int = 0

    def to_dict(self) -> dict:
        """The layer for `owl-memory context --json`: name, input variable, characters, bound, dropped, text."""
        return {"layer": self.name, "field": FIELDS.get(self.name, "task"), "chars": len(self.text),
                "bound": self.bound, "dropped": self.dropped, "text": self.text}

    def brief(self) -> LayerBrief:
        """What a trajectory records of the layer: its name, length, bound and dropped lines (not its text)."""
        return LayerBrief(self.name, len(self.text), self.bound, self.dropped)


def build(layers: str | Iterable[str] | None, graph: Graph | None = None, memory: Memory | None = None,
          guide: str | Path | None = None, bounds: dict[str, int] | None = None,
          endpoints: tuple[str, ...] = ()) -> list[Layer]:
    """Pack the requested layers, each to its bound in `bounds` (a run's budgets: L2, A1's, is not a layer's and is
    not read); ConfigError when a layer has nothing to be computed from. Without an ontology, L0 is the card of the
    run's endpoints (what memory's EndpointProfiles know of each)."""
    names, bounds = parse_layers(layers), {**BOUNDS, **(bounds or {})}
    if any(not 0 < int(bounds[n]) <= MAX_BOUND for n in names):
        raise ConfigError(f"layer bounds must be between 1 and {MAX_BOUND} characters (the RLM's preview size)")
    if graph is None and ("L1" in names or ("L0" in names and not endpoints)):
        raise ConfigError("layers L0 and L1 are computed from the ontology: pass ontology=PATH (or --ontology); "
                          "L0 also from the run's endpoints (--endpoint URL)")
    return [_layer(n, int(bounds[n]), graph, memory, guide, endpoints) for n in names]


def preview(graph: Graph | None, layers: str | Iterable[str] | None = "L0,L1", memory: Memory | None = None,
            guide: str | Path | None = None, budgets: str | dict | None = None, task: str | None = None,
            k: str | int | None = None) -> list[Layer]:
    """What a run with these layers shows the model, packed as the runner packs it; with a task and a memory, A1's
    "Relevant prior experience" block for that task too (as layer "L2", bound by the L2 budget, `dropped` counting
    the retrieved items that did not fit). ConfigError when a task comes without a memory."""
    from ..model import RunConfig
    from .injection import experience, retrieve

    config = RunConfig(condition="A1", k=k, budgets=budgets, layers=parse_layers(layers), guide=guide)
    packed = build(config.layers, graph, memory, guide, config.budgets)
    if task is None:
        return packed
    if memory is None:
        raise ConfigError("A1's block for a task comes from a memory: pass --memory PATH (memory=...) with --task")
    retrieval = retrieve(memory, task, graph, config.access)
    block, shown = experience(memory, retrieval, config.access, config.budgets.get("L2"))
    bound = min(config.budgets.get("L2") or MAX_BOUND, MAX_BOUND)
    return [*packed, Layer("L2", block, bound, len(retrieval.hits) - len(shown))]


def _layer(name: str, bound: int, graph: Graph | None, memory: Memory | None, guide: str | Path | None,
           endpoints: tuple[str, ...]) -> Layer:
    """One layer packed to `bound` (build has checked that it can be computed)."""
    if name == "L3":
        return guide_summary(_guide_text(guide), bound)
    if graph is None:
        return endpoint_card(endpoints, memory, bound)
    return sense_card(graph, bound) if name == "L0" else schema_card(graph, memory, bound)


def inputs(layers: list[Layer]) -> dict[str, str]:
    """The layers as RLM input variables: {ontology_card: ..., schema_constraints: ..., guide_summary: ...}."""
    return {FIELDS[layer.name]: layer.text for layer in layers}


def sense_card(graph: Graph, bound: int = BOUNDS["L0"]) -> Layer:
    """L0: the ontology's sense card (agent/ontology_cards.py), packed to `bound`."""
    return _pack("L0", sense_lines(graph), bound)


def endpoint_card(urls: tuple[str, ...], memory: Memory | None = None, bound: int = BOUNDS["L0"]) -> Layer:
    """L0 of a run on endpoints: each endpoint with what memory's profile of it knows (graphs, features, quirks,
    limits), or that nothing is known yet and how to discover it."""
    lines = ["Endpoint card (L0): the SPARQL endpoints this run may query"]
    for url in urls:
        found = find_profile(memory, url)
        lines.append(f"- {summary(found[1])}" if found else
                     f"- {url}: nothing known yet; discover it with endpoint_describe and endpoint_graphs")
    return _pack("L0", lines, bound)


def schema_card(graph: Graph, memory: Memory | None = None, bound: int = BOUNDS["L1"]) -> Layer:
    """L1: the ontology's schema card with memory's anti-patterns (agent/ontology_cards.py), packed to `bound`."""
    return _pack("L1", schema_lines(graph, memory), bound)


def guide_summary(text: str, bound: int = BOUNDS["L3"]) -> Layer:
    """L3: the guide's headings and the first sentence of each paragraph, in order, within the bound."""
    lines = ["Guide summary (L3):"]
    for block in re.split(r"\n\s*\n", text.strip()):
        block = " ".join(block.split())
        if block.startswith("#"):
            lines.append(block.lstrip("# ").strip() + ":")
        elif block:
            lines.append("- " + re.split(r"(?<=[.!?])\s", block, maxsplit=1)[0])
    return _pack("L3", lines, bound)




def _guide_text(guide: str | Path | None) -> str:
    """The guide's text from a path or a string; ConfigError when L3 has no guide."""
    if guide is None or not str(guide).strip():
        raise ConfigError("layer L3 summarizes a guide: pass guide=PATH (a Markdown or text file) or the guide text")
    path = Path(str(guide)) if len(str(guide)) < 4096 and "\n" not in str(guide) else None
    if path is not None and path.is_file():
        return path.read_text(encoding="utf-8")
    if path is not None and path.suffix.lower() in (".md", ".txt", ".markdown"):
        raise ConfigError(f"guide file {guide} does not exist; check the path")
    return str(guide)


def _pack(name: str, lines: list[str], bound: int) -> Layer:
    """Whole lines in order while they fit in `bound` characters (a line alone longer than the bound is cut)."""
    kept: list[str] = []
    size = -1
    for line in lines:
        if size + 1 + len(line) > bound:
            if not kept:
                kept, size = [line[:max(bound - 1, 0)] + "…"], bound
            continue
        kept.append(line)
        size += 1 + len(line)
    return Layer(name, "\n".join(kept)[:bound], bound, len(lines) - len(kept))
