"""A memory on any SPARQL 1.1 Query + Update server.

layout (its named graphs), client (the SPARQL protocol and escaped terms), payloads (the payload graph), postings
(the text index and what a search reads of it), corpus (corpus statistics cached per memory version), ranking
(searches run on the server), backend (the Backend they make together).
"""
