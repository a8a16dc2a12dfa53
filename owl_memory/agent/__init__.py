"""The agent side: the capped DSPy tool surface, the strict-RLM runner, trajectories and leakage measurement."""
