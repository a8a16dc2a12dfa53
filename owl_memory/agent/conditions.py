"""The ablation conditions (docs/ablations.md): how a run reaches memory. The same task, LM and budgets in every one."""

CONDITIONS = ("A0", "A1", "A2", "A3", "A4", "A5")
TOOL_CONDITIONS = ("A2", "A3", "A4")  # memory reached through the tools
HELP = ("A0 no memory; A1 retrieved items (by text, ontology and task type; 2 success + 1 failure + 1 seed by "
        "default, see --k; title, summary, <= 3 bullets) injected into the task; A2 memory through capped tools only; "
        "A3 A2 plus a <= 300-character hint (best item's title and action schema); A4 negative control: uncapped "
        "tools and the prompt text in the inputs; A5 memory as plain read-only files (list, grep, read windows)")
