"""One module per dependency whose internals owl-memory uses: rdflib SPARQL, pySHACL, owlready2, dspy."""
