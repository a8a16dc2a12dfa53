"""Memory as plain files (condition A5, the files-and-grep text baseline): every live item is a read-only Markdown
file `<Kind>/<title-slug>-<id>.md` (title, kind, applicability, summary, then its content), listed, grepped and read
in budgeted windows like every other payload. Nothing is written; nothing but these tools reaches the files.

A file's text is rendered from the item when first touched and kept in the run's scratch store, watched for leakage.
"""

from __future__ import annotations

import re

from ...errors import ToolError
from ...model import Item
from .caps import MAX_LIST, as_int, as_limit, as_text, clip
from .toolbox import Toolbox, ToolFamily, family

MAX_FILES = 1_000  # items a run's file view holds (the most applicable first, as a search without text orders them)
GREP_LINE = 160  # characters of a matching line returned
MAX_PATTERN = 200
_SLUG = re.compile(r"[^a-z0-9]+")


@family
class FilesTools(ToolFamily):
    """The memory as a folder of read-only text files: list, grep (literal, case-insensitive) and read windows."""

    order = 25
    names = ("files_list", "files_grep", "files_read")

    def __init__(self, box: Toolbox):
        """The family over one run's toolbox; the file index is built on first use."""
        super().__init__(box)
        self._paths: dict[str, str] | None = None  # path -> item id
        self._refs: dict[str, str] = {}  # path -> scratch blob key of its rendered text

    def offered(self) -> bool:
        """Only with a memory, and only when the condition offers memory as files."""
        return self.box.memory is not None and self.box.access.files

    def files_list(self, folder: str = "", start: int = 0, limit: int = MAX_LIST) -> dict | str:
        """Paths and sizes of the memory's files under `folder` ("" for all; folders are item kinds), from `start`."""
        paths = self._under(folder)
        first, n = max(0, as_int(start, "start")), as_limit(limit)
        page = paths[first:first + n]
        return {"files": [{"path": p, "chars": self._size(p)} for p in page], "count": len(paths),
                "more": first + n < len(paths)}

    def files_grep(self, pattern: str, folder: str = "", limit: int = 20) -> dict | str:
        """Lines containing the literal `pattern` (case-insensitive) in the files under `folder`: path, line number
        and the line (clipped); the lines count against your read budget."""
        pattern = as_text(pattern, "pattern").strip().casefold()
        if not pattern or len(pattern) > MAX_PATTERN:
            raise ToolError(f"pattern must be 1 to {MAX_PATTERN} characters of literal text")
        n, more = as_limit(limit), False
        found: list[dict] = []
        for path in self._under(folder):
            for number, line in enumerate(self._text(path).splitlines(), 1):
                if pattern in line.casefold():
                    if len(found) == n:
                        more = True
                        break
                    found.append({"path": path, "line": number, "text": clip(line, GREP_LINE)})
            if more:
                break
        self._charge(found)
        for seen in dict.fromkeys(m["path"] for m in found):
            self.box.used(self._index()[seen])
        return {"matches": found, "count": len(found), "more": more, "budget_left": self.box.left()}

    def files_read(self, path: str, start: int = 0, length: int = 512) -> dict | str:
        """Up to `length` characters of one file from offset `start` (capped per read and by your read budget)."""
        path = as_text(path, "path").strip().lstrip("/")
        if path not in self._index():
            raise ToolError("no such file; list them with files_list or find lines with files_grep")
        box = self.box
        window = box.scratch.read(self._key(path), as_int(start, "start"), as_int(length, "length"), budget=box.budget)
        box.used(self._index()[path])
        return {**window.to_dict(), "path": path, "budget_left": box.left()}

    def _index(self) -> dict[str, str]:
        """path -> item id for the live items (built once per run)."""
        if self._paths is None:
            hits = self.box.require_memory().search(k=MAX_FILES)
            self._paths = {f"{h.kind}/{_slug(h.title)}-{h.id}.md": h.id for h in hits}
        return self._paths

    def _under(self, folder: object) -> list[str]:
        """The sorted paths under a folder ("" for all)."""
        prefix = as_text(folder, "folder").strip().strip("/")
        return sorted(p for p in self._index() if not prefix or p.startswith(prefix + "/"))

    def _key(self, path: str) -> str:
        """The scratch key of a file's rendered text (rendered, stored and watched on first use)."""
        if path not in self._refs:
            item = self.box.require_memory().get(self._index()[path])
            ref = self.box.scratch.put(render(item, self.box.blobs.load(item.content_ref)), "content")
            self.box.scratch_keys.add(ref.key)
            self.box.watch(ref.key)
            self._refs[path] = ref.key
        return self._refs[path]

    def _text(self, path: str) -> str:
        """A file's whole text, for grep (library side: only matching lines go back to the model)."""
        return self.box.scratch.load(self._key(path))

    def _size(self, path: str) -> int:
        """A file's length in characters."""
        return self.box.scratch.ref(self._key(path)).size

    def _charge(self, found: list[dict]) -> None:
        """Charge grep's returned lines to the read budget (CapExceeded when it is spent)."""
        if not found:
            return
        allowed = self.box.budget.allow("files_grep", sum(len(m["text"]) for m in found))
        while found and sum(len(m["text"]) for m in found) > allowed:
            found.pop()
        self.box.budget.charge("files_grep", sum(len(m["text"]) for m in found))


def render(item: Item, content: str) -> str:
    """An item as a plain file: title, kind and scope, applicability, when to use it, then its content."""
    lines = [f"# {item.title}", f"kind: {item.kind} · scope: {item.scope} · id: {item.id}"]
    if item.applies_to or item.task_types or item.failure_modes:
        lines.append(f"applies to: {', '.join(item.applies_to) or 'any ontology'} · task types: "
                     f"{', '.join(item.task_types) or 'any'} · prevents: {', '.join(item.failure_modes) or '-'}")
    return "\n".join([*lines, f"use: {item.summary}", "", content.strip(), ""])


def _slug(title: str) -> str:
    """A file-name form of a title: lower-case words joined by hyphens, at most 60 characters."""
    return _SLUG.sub("-", title.casefold()).strip("-")[:60].rstrip("-") or "item"
