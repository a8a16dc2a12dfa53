"""Tooling for owl-memory's tests and benchmarks, not part of the product: nothing in `owl_memory` imports it.

`repair`: instance data built from shapes, the mutation catalogue, the repairability oracle, the W3C SHACL Core and
SHACL-SPARQL suites and the repair benchmark's scoring and transfer; `retrieval`: the generated memories, query sets
and rdflib / owlready2 baselines of the retrieval benchmark; `memory_cases`: the memory-specific case families;
`timing`: latency summaries; `servers`: Oxigraph and Virtuoso launched on loopback.
"""
