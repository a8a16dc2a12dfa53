"""The embedded memory: one directory with owlready2's SQLite quadstore and a blob file.

world (the graph file: open, formats, upgrades, write transaction), items (items in the quadstore), index (the
retrieval index retrieval.rank asks: keys, postings, itemsets, topk), backend (the Backend they make together).
"""
