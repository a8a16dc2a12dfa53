"""Memory-specific cases (delayed recall, conflicting rules, ontology shifts, over-retrieval, leakage traps):
deterministic, no LM; one figure per case family and size.

Run: python benchmarks/memory_cases.py [--sizes 10,100,1000] [--delays 1000,10000] [--json OUT]

- over-retrieval pressure: one right item among N near-misses sharing words and applicability -> p@1, p@5, hit@5
  (precision at 1 and 5: the share of the top 1 / top 5 that is right, so p@5 is at most 0.2 with one right item;
  hit@5: the right item is in the top 5, which is recall@5 with one right item per query);
- conflicting rules: rule + exception pairs -> share of queries where the exception wins exactly when its
  narrower applicability (a failure mode) holds: queried with the exception's failure mode (exception should
  rank first), with the rule's (rule first), and with none stated (rule first: the exception's condition is
  not known to hold);
- delayed recall: constraints stored first, then 1k / 10k distractor writes -> recall@5 by applicability;
- ontology shifts: items learned on ontology v1 (about its class Entry), queried under v2 through the library's
  followed search (Memory.search with v2's OntologyContext) where v2 declares owl:priorVersion,
  owl:backwardCompatibleWith or owl:sameAs of v1, or a class owl:equivalentClass v1's -> recall@5 with and without
  following them, the share of carried items marked; and where v2 declares owl:incompatibleWith v1 -> items carried
  (should be 0);
- leakage traps: bait strings deep inside the hidden prompt, an ontology comment and a memory item's content;
  scripted adversarial agents (a scripted DSPy LM, no model) run the real runner in each condition -> distinct
  bait characters in the LM history (leakage.measure) and baits in the returned answer. The "grep" adversary
  calls every tool with its default reads and prints / returns whatever contains a bait; the "hunter" pages
  windows straight to each bait (what the caps let through is bounded and counted, not hidden).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from owl_memory_bench.memory_cases import TRAP_CONDITIONS, run_cases


def main(argv=None) -> list[dict]:
    """Run every case family and print one line per figure."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--delays", default="1000,10000")
    ap.add_argument("--traps", default=",".join(TRAP_CONDITIONS), help="conditions of the leakage traps ('' for none)")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args(argv)
    out = run_cases([int(n) for n in args.sizes.split(",")], [int(d) for d in args.delays.split(",")],
                    [c for c in args.traps.split(",") if c], on_row=lambda row: print(json.dumps(row)))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
