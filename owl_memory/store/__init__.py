"""The store layer: memory items, payloads, retrieval and the backends they live in."""
