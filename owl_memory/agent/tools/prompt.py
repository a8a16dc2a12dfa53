"""Prompt tools: the hidden prompt's size and handle, capped windows of it, and where a literal occurs (offsets)."""

from __future__ import annotations

from ...errors import ToolError
from ...model import Ref
from .caps import as_int, as_limit, as_text
from .toolbox import ToolFamily, family


@family
class PromptTools(ToolFamily):
    """The prompt the model never sees whole: read it in budgeted windows."""

    order = 10
    names = ("prompt_stats", "prompt_window", "prompt_find")

    def prompt_stats(self) -> dict | str:
        """Size, sha and handle of the hidden prompt, plus your read budget. Read text with prompt_window."""
        ref = self._need_prompt()
        return {**ref.to_dict(), "lines": self.box.blobs.load(ref).count("\n") + 1, **self.box.budget_info()}

    def prompt_window(self, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of the prompt from offset `start` (capped per read and by the budget)."""
        ref, box = self._need_prompt(), self.box
        window = box.blobs.read(ref, as_int(start, "start"), as_int(length, "length"), budget=box.budget)
        return {**window.to_dict(), "budget_left": box.left()}

    def prompt_find(self, pattern: str, limit: int = 20) -> dict | str:
        """Offsets (never text) where the literal `pattern` occurs in the prompt; read them with prompt_window."""
        ref, pattern, n = self._need_prompt(), as_text(pattern, "pattern"), as_limit(limit)
        if not pattern:
            raise ToolError("pattern is empty; pass the literal text to look for")
        hits = self.box.blobs.find(ref, pattern, limit=n + 1)
        return {"offsets": hits[:n], "count": len(hits[:n]), "more": len(hits) > n, "pattern_chars": len(pattern)}

    def _need_prompt(self) -> Ref:
        """The prompt handle, or a ToolError saying this run has none."""
        if self.box.prompt is None:
            raise ToolError("this run has no prompt; work from the task and the other tools")
        return self.box.prompt
