"""The one exception hierarchy of owl-memory: every error a user can act on."""


class OwlMemoryError(Exception):
    """Base class of every error owl-memory raises on purpose; `cause` is a short slug of what went wrong (a query's
    trajectory event and the AntiPattern extracted from a failed run name it), the class's own unless given."""

    cause = "error"

    def __init__(self, *args: object, cause: str | None = None):
        super().__init__(*args)
        if cause:
            self.cause = cause


class UnknownItem(OwlMemoryError, KeyError):
    """No memory item, blob or handle has that id; list ids with `search`."""

    def __str__(self):
        return str(self.args[0]) if self.args else "unknown item"


class InvalidItem(OwlMemoryError, ValueError):
    """An item or graph fails the SHACL shapes; the message carries what to change."""


class LoadError(OwlMemoryError, ValueError):
    """A file or text (RDF, YAML, SPARQL) could not be read or parsed; carries the source, the line and the parser's
    reason when known."""

    def __init__(self, message, *, source=None, line=None, reason=None):
        self.source, self.line, self.reason = source, line, reason or message
        where = f"{source}" + (f":{line}" if line else "") if source else ""
        super().__init__(f"{where}: {message}" if where else message)


class OutputError(OwlMemoryError, ValueError):
    """An output file cannot be written (missing folder, no permission, a folder, unknown format); nothing was."""


class CapExceeded(OwlMemoryError):
    """A read would pass a cap or spend more than the run's read budget."""


class ConfigError(OwlMemoryError, ValueError):
    """A required setting (an LM, a data directory, an interpreter) is missing or wrong."""


class CurriculumError(OwlMemoryError, ValueError):
    """A curriculum cannot be made as asked (unknown family, too few entities, more tasks than the ontologies give);
    the message says what to change."""


class ToolError(OwlMemoryError):
    """A recoverable tool failure; its message becomes the "[Error] …" observation."""

    cause = "tool-error"


class QueryFailed(OwlMemoryError, ValueError):
    """A SPARQL query does not parse, or fails while it runs over a graph; the message carries rdflib's reason."""

    cause = "query-failed"


class QueryRefused(OwlMemoryError, ValueError):
    """A SPARQL query is not a read-only query over the given graph (update, SERVICE, FROM, LOAD) or does not parse."""

    cause = "refused"


class MemoryNotFound(OwlMemoryError):
    """No memory at that location; a command that writes creates it, or `owl-memory copy` moves one there."""


class ServerError(OwlMemoryError):
    """A SPARQL server refused a request or could not be reached; the message carries its answer."""


class MemoryLocked(OwlMemoryError):
    """Another process held the memory's write lock past the bounded wait; the message names it."""


class MemoryCorrupt(OwlMemoryError):
    """A memory file is damaged (not SQLite, or pages fail the integrity check); restore it from a backup."""


class DiskFull(OwlMemoryError, OSError):
    """The disk holding a memory (or an output) is full: the write was rolled back and nothing was lost; free space
    and retry."""


class VersionMismatch(OwlMemoryError):
    """The memory was written in a store format this owl-memory does not read; upgrade owl-memory."""


class MemoryReadOnly(OwlMemoryError):
    """The memory's files or folder are read-only: reads work, writes are refused."""


class InstanceError(OwlMemoryError, ValueError):
    """No conforming instance data could be built from a shapes graph; the message names what is left."""


class EndpointError(ToolError):
    """A SPARQL endpoint could not be used as asked: not on the run's list, redirected, too slow, too large, over the
    run's request budget, or it answered with an error; the message names the endpoint and what to do."""

    cause = "endpoint-error"


class QueryTimeout(OwlMemoryError):
    """A SPARQL query ran past its wall-time limit and was stopped; narrow the query or add LIMIT."""

    cause = "timeout"
