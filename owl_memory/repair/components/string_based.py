"""String-based constraint components (SHACL 4.4): minLength, maxLength, pattern, languageIn, uniqueLang."""

from __future__ import annotations

import re

from rdflib import Literal

from ...model import Violation
from ...vocab import SH
from ..context import Context
from ..patch import Patch, drop_value, dropping, replace_value
from ..paths import path_of, value_triple, values
from ..registry import strategy
from ..synth import generate, same_kind


@strategy("minLength.pad", SH.MinLengthConstraintComponent,
          bindings={"length": "shape sh:minLength"})
def minlength_pad(ctx: Context, v: Violation) -> list[Patch]:
    """sh:minLength: pad a literal value up to the minimum length."""
    n, val = int(ctx.param(v.shape, "minLength")), v.value
    if not isinstance(val, Literal):
        return []
    text = str(val) + "x" * (n - len(str(val)))
    return replace_value("minLength.pad", ctx, v, same_kind(val, text))


@strategy("maxLength.truncate", SH.MaxLengthConstraintComponent,
          bindings={"length": "shape sh:maxLength"})
def maxlength_truncate(ctx: Context, v: Violation) -> list[Patch]:
    """sh:maxLength: truncate a literal value to the maximum length (when still well-formed)."""
    n, val = int(ctx.param(v.shape, "maxLength")), v.value
    return replace_value("maxLength.truncate", ctx, v, same_kind(val, str(val)[:n])) if isinstance(val, Literal) else []


@strategy("maxLength.drop_iri", SH.MaxLengthConstraintComponent, bindings={"value": "the IRI value, dropped"})
def maxlength_drop_iri(ctx: Context, v: Violation) -> list[Patch]:
    """sh:maxLength on an IRI value (its text is the node's name, never shortened): take the value off the path."""
    if v.value is None or isinstance(v.value, Literal) or v.value == v.focus:
        return []
    return drop_value("maxLength.drop_iri", ctx, v, v.value)


@strategy("pattern.generate", SH.PatternConstraintComponent,
          bindings={"pattern": "shape sh:pattern", "flags": "shape sh:flags"}, order=2)
def pattern_generate(ctx: Context, v: Violation) -> list[Patch]:
    """sh:pattern: replace the value by a synthetic string generated from the regular expression (one that says it
    is synthetic where the pattern allows); never a value another node holds."""
    text = generate(str(ctx.param(v.shape, "pattern")), str(ctx.param(v.shape, "flags") or ""), marked=True)
    if text is None or v.value is None:
        return []
    new = same_kind(v.value, text) if isinstance(v.value, Literal) else Literal(text)
    return replace_value("pattern.generate", ctx, v, new)


@strategy("languageIn.retag", SH.LanguageInConstraintComponent,
          bindings={"lang": "first of shape sh:languageIn"})
def languagein_retag(ctx: Context, v: Violation) -> list[Patch]:
    """sh:languageIn: give the text the first allowed language tag."""
    langs = ctx.listed(v.shape, "languageIn")
    val = v.value
    if not langs:
        return []
    text = str(val) if isinstance(val, Literal) else re.split(r"[#/:]", str(val))[-1]
    return replace_value("languageIn.retag", ctx, v, Literal(text, lang=str(langs[0])))


@strategy("uniqueLang.drop_duplicates", SH.UniqueLangConstraintComponent,
          bindings={"keep": "first value per language"})
def uniquelang_drop(ctx: Context, v: Violation) -> list[Patch]:
    """sh:uniqueLang: drop surplus values that repeat a language tag (the first by order stays)."""
    path, seen, drop = path_of(ctx, v), set(), []
    for x in values(ctx, v.focus, path):
        lang = x.language if isinstance(x, Literal) else None
        if lang and lang.lower() in seen:
            drop.append(value_triple(ctx, v.focus, path, x))
        seen.add(lang.lower() if lang else None)
    return dropping("uniqueLang.drop_duplicates", v.focus, drop)
