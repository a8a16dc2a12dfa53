"""Judge rules and constraints as typed values: checks that memory carries and a judge or the runner executes.

A `JudgeRule` is the om:actionSchema of an om:JudgeRule item: a SPARQL template learned from a gold query, its
task constants lifted to parameters. In the template a parameter is a placeholder IRI (`placeholder("p1")`,
<urn:owl-memory:parameter:p1>); a judge binds it by replacing that node in the parsed query with the task's term
(adapters.sparql_binding.bind_terms), never by editing the text. `question` is the task text the rule was learned from
with each parameter's mention replaced by "{p1}": a task applies when its text has that form, and each slot's text
names the term bound to its parameter.

A `QueryConstraint` is the om:actionSchema of an om:Constraint item: a requirement the runner checks on every
query the agent runs (its parsed form), e.g. "needs a LIMIT".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidItem

JUDGE_RULE = "judge_rule"
QUERY_CONSTRAINT = "query_constraint"
PARAMETER_NAMESPACE = "urn:owl-memory:parameter:"
CHECKS = ("select", "ask")  # select: the answer's terms equal the rows; ask: the ASK holds over the run's graph
OUTCOMES = {"select": "answer-terms-equal-rows", "ask": "ask-true"}
REQUIREMENTS = ("needs-limit", "needs-from-graph", "forbids-predicate")


def placeholder(name: str) -> str:
    """The IRI that stands for parameter `name` in a rule's template."""
    return PARAMETER_NAMESPACE + name


@dataclass(frozen=True)
class Parameter:
    """A lifted constant of a query recipe or a judge rule: its name ("$p1" in a recipe, "p1" in a rule) and kind
    ("iri" or "literal"; a rule's literal may add the original's "@language" or "^^datatype"), and for a rule's IRI
    the role of the term it was learned from ("class", "property", "individual"; "" for none) and, for an
    individual, its classes with their superclasses: a term bound to it must have the same role and, when it is
    an individual with classes, share one of them."""

    name: str
    kind: str
    role: str = ""
    classes: tuple[str, ...] = ()


@dataclass(frozen=True)
class JudgeRule:
    """An executable check learned from gold.

    Args:
        check: "select" (the answer's terms must equal the template's rows over the task's ontology) or "ask" (the
            template, an ASK, must hold over the run's graph: the ontology plus the answer when it is RDF).
        template: the SPARQL text, each parameter a placeholder IRI.
        parameters: the parameters to bind, in slot order.
        question: the task text it was learned from, each parameter's mention replaced by "{name}".
        outcome: what a success means (OUTCOMES[check]).
        notes: what compiling left out and why (e.g. a name of a constant that names two terms, so names none).
    """

    check: str
    template: str
    parameters: tuple[Parameter, ...]
    question: str
    outcome: str = ""
    notes: tuple[str, ...] = ()
    operator = JUDGE_RULE

    def __post_init__(self):
        """Refuse an unknown check; fill the outcome of the check."""
        if self.check not in CHECKS:
            raise InvalidItem(f"a judge rule's check is one of {', '.join(CHECKS)}, got {self.check!r}")
        object.__setattr__(self, "outcome", self.outcome or OUTCOMES[self.check])

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": JUDGE_RULE, "check": self.check, "template": self.template, "question": self.question,
                "outcome": self.outcome, **({"notes": list(self.notes)} if self.notes else {}),
                "parameters": [{"name": p.name, "kind": p.kind, **({"role": p.role} if p.role else {}),
                                **({"classes": list(p.classes)} if p.classes else {})} for p in self.parameters]}

    @classmethod
    def from_json(cls, d: dict) -> JudgeRule:
        """Inverse of to_json."""
        params = tuple(Parameter(str(p["name"]), str(p["kind"]), str(p.get("role") or ""),
                                 tuple(str(c) for c in p.get("classes") or ())) for p in d.get("parameters") or ())
        return cls(str(d["check"]), str(d["template"]), params, str(d["question"]), str(d.get("outcome") or ""),
                   tuple(str(n) for n in d.get("notes") or ()))


@dataclass(frozen=True)
class QueryConstraint:
    """A hard requirement on every query the agent runs, checked on its parsed form.

    Args:
        requirement: "needs-limit" (a LIMIT), "needs-from-graph" (a FROM or FROM NAMED graph) or
            "forbids-predicate" (no triple pattern or path uses `value`, an IRI).
        value: the requirement's argument (the IRI of forbids-predicate), "" for the others.
    """

    requirement: str
    value: str = ""
    operator = QUERY_CONSTRAINT

    def __post_init__(self):
        """Refuse an unknown requirement or a forbids-predicate without an IRI."""
        if self.requirement not in REQUIREMENTS:
            raise InvalidItem(f"a query constraint's requirement is one of {', '.join(REQUIREMENTS)}, "
                              f"got {self.requirement!r}")
        if self.requirement == "forbids-predicate" and not self.value.startswith(("http://", "https://", "urn:")):
            raise InvalidItem("forbids-predicate needs value: the predicate's full IRI")

    def to_json(self) -> dict:
        """The stored JSON form."""
        return {"operator": QUERY_CONSTRAINT, "requirement": self.requirement, "value": self.value}

    @classmethod
    def from_json(cls, d: dict) -> QueryConstraint:
        """Inverse of to_json."""
        return cls(str(d["requirement"]), str(d.get("value") or ""))
