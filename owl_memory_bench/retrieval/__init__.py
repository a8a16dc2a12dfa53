"""The retrieval benchmark's material: generated memories and queries, the rdflib and owlready2 baselines."""
