"""The `owl-memory` command line: a thin layer over the library; the only package that knows the terminal.

One module per area (memory, agent, runs, learning, construction, ablation), each adding its commands to `main`; every
command imports the library it needs only when it runs, so `owl-memory --help` stays fast.
"""

from __future__ import annotations

import click

from . import ablation, agent, construction, learning, memory, runs


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="owl-memory")
def main() -> None:
    """Symbolic, procedural memory for LLM agents (OWL items, capped payload handles, SHACL repair).

    Example: owl-memory sprint experiments/sprint1/sprint.yaml
    """


for _area in (memory, agent, runs, learning, construction, ablation):
    for _command in _area.COMMANDS:
        main.add_command(_command)
