"""Value range constraint components (SHACL 4.3): sh:minInclusive/minExclusive/maxInclusive/maxExclusive."""

from __future__ import annotations

from ...model import Violation
from ...vocab import SH
from ..context import Context
from ..patch import Patch, replace_value
from ..registry import strategy
from ..synth import clamp


@strategy("range.clamp", SH.MinInclusiveConstraintComponent, SH.MinExclusiveConstraintComponent,
          SH.MaxInclusiveConstraintComponent, SH.MaxExclusiveConstraintComponent,
          bindings={"bound": "shape sh:min/maxInclusive/Exclusive"})
def range_clamp(ctx: Context, v: Violation) -> list[Patch]:
    """sh:min/maxInclusive/Exclusive: move the value to the nearest allowed one."""
    s = v.shape
    new = clamp(v.value, *(ctx.param(s, k) for k in ("minInclusive", "minExclusive", "maxInclusive",
                                                          "maxExclusive")))
    return replace_value("range.clamp", ctx, v, new)
