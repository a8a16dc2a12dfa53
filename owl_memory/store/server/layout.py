"""How a memory lies on a SPARQL 1.1 server (one memory per dataset): one named graph per job, and the terms of the
payload, use-event and index graphs.

- `GRAPH_ITEMS`: the memory ontology, items, links and PROV-O provenance (what embedded memory keeps in its
  quadstore);
- `GRAPH_PAYLOADS`: payloads, content-addressed (`<blob/SHA256>` with its kind, size and text); a window is cut
  on the server with SUBSTR, so no read transfers a whole payload (payloads.py);
- `GRAPH_INDEX`: the text index (postings.py: each item's document length and one posting per token in a bucket
  predicate naming its frequency and the length, so BM25 is FTS5's and a search reads the best buckets first) and
  the memory version, which every write to the items graph replaces (corpus.py: readers keep what they read of the
  whole memory while it is unchanged);
- `GRAPH_USES`: one event node per `record_use`; a counter is the item's stored literal plus its events, so
  concurrent writers never lose a count on servers whose updates are only snapshot-isolated (Oxigraph).
"""

from __future__ import annotations

from rdflib import Namespace, URIRef

GRAPH_ITEMS = URIRef("http://w3id.org/owl-memory/graph/items")
GRAPH_PAYLOADS = URIRef("http://w3id.org/owl-memory/graph/payloads")
GRAPH_USES = URIRef("http://w3id.org/owl-memory/graph/uses")
GRAPH_INDEX = URIRef("http://w3id.org/owl-memory/graph/index")
GRAPHS = (GRAPH_ITEMS, GRAPH_PAYLOADS, GRAPH_USES, GRAPH_INDEX)
SRV = Namespace("http://w3id.org/owl-memory/server#")  # payload and use-event terms
IDX = Namespace("http://w3id.org/owl-memory/index#")  # index-graph terms
