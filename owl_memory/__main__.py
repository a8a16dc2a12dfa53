"""`python -m owl_memory` runs the CLI."""

from .cli import main

main()
