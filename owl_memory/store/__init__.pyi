"""The public names of owl_memory.store (the front door): owl_memory/lazy.py imports each on first use."""

from .alignment import ontology_context as ontology_context
from .analysis import Analysis as Analysis, analyze as analyze
from .blobs import BlobStore as BlobStore, PayloadStore as PayloadStore, ReadBudget as ReadBudget
from .copy import CopyReport as CopyReport, copy_memory as copy_memory
from .items import run_iri as run_iri, source_iri as source_iri
from .memory import MAX_ROWS as MAX_ROWS, Memory as Memory
from .retrieval import MAX_K as MAX_K, check_filters as check_filters
