"""Repair test material: built instance data, its mutations, the oracle, the suites, and how a repair is scored."""
