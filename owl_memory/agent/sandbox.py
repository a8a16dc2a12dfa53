"""An offline sandbox for the agent's code: dspy's interpreter worker run under bubblewrap (`bwrap`).

The worker is dspy's own LocalInterpreter worker (stdlib only), started inside a bwrap container with no network
(a fresh network namespace: not even the host's loopback), no environment, a read-only view of the system
libraries and the Python runtime, read-only the paths it is given, and one writable folder, the scratch folder
(also its working and temp directory). Tools still run on the host: a tool call in the sandbox travels over the
worker's stdin/stdout pipe and the host answers it (dspy's CodeInterpreter protocol), with every cap intact.
Needs Linux and bubblewrap from the OS packages (`apt-get install bubblewrap`); nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn

from ..adapters.dspy import CodeExecutionError, CodeInterpreterError, CommandInterpreter
from ..errors import ConfigError

SCRATCH = "/scratch"  # where the scratch folder appears inside the sandbox
WORKER = "/sandbox/worker.py"  # where dspy's worker script appears inside the sandbox
EXECUTION_TIMEOUT = 120.0  # wall seconds one step of agent code may take
CPU_SECONDS = 300  # CPU seconds one worker may use (a worker lives until a limit stops it or the run ends)
MEMORY_BYTES = 1 << 30  # address space of the worker (RLIMIT_AS): past it, allocations raise MemoryError
_CPU_KILLED = {128 + signal.SIGXCPU, 128 + signal.SIGKILL}  # bwrap's exit status when its child got these
_SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/ld.so.conf",
                     "/etc/ld.so.conf.d")


def bwrap_command(read_paths: tuple[Path, ...], scratch: Path, mounts: tuple[tuple[Path, str], ...] = ()) -> list[str]:
    """The bwrap arguments that confine a program: no network, no environment, these paths only (`mounts`:
    extra read-only (source, destination) pairs)."""
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
           "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", SCRATCH, "--setenv", "TMPDIR", SCRATCH,
           "--setenv", "LANG", "C.UTF-8"]
    for path in _SYSTEM_LIBRARIES:
        cmd += ["--ro-bind-try", path, path]
    runtime = str(Path(sys.base_prefix).resolve())
    cmd += ["--ro-bind", runtime, runtime, "--dev", "/dev", "--proc", "/proc"]
    for source, destination in [*((p, str(p)) for p in read_paths), *mounts]:
        cmd += ["--ro-bind", str(source), destination]
    return cmd + ["--bind", str(scratch), SCRATCH, "--remount-ro", "/", "--chdir", SCRATCH]  # root: read-only


class BwrapInterpreter(CommandInterpreter):
    """dspy's local interpreter protocol with its worker inside bwrap; see the module docstring for what it allows.

    Args:
        tools: host functions the code may call by name (dspy.RLM fills these in).
        output_fields: typed SUBMIT fields (dspy.RLM fills these in).
        read_paths: files or folders the code may read, mounted read-only at the same path.
        scratch: the one folder the code may write (shown as /scratch); a fresh temp folder, removed at
            shutdown, when None.
        execution_timeout: wall seconds one execution may take before the worker is killed.
        cpu_seconds: CPU seconds the worker may use before the kernel stops it (RLIMIT_CPU).
        memory_bytes: the worker's address-space limit (RLIMIT_AS); past it, allocations raise MemoryError.

    A limit hit is an `[Error]` for the model naming the limit, not the end of the run: the worker is killed and the
    next step starts a fresh one (its variables are gone).
    """

    execution_instructions = (
        "Code runs as Python in a sandbox: no network, no files but /scratch (writable; your working directory) "
        "and any paths you were told about. State persists across steps. Host tools and SUBMIT are global "
        "functions; call the tools for prompt, memory and ontology data.")

    def __init__(self, tools: dict[str, Callable] | None = None, output_fields: list[dict] | None = None, *,
                 read_paths: Iterable[str | Path] = (), scratch: str | Path | None = None,
                 execution_timeout: float | None = EXECUTION_TIMEOUT, cpu_seconds: int = CPU_SECONDS,
                 memory_bytes: int = MEMORY_BYTES):
        """A sandboxed interpreter under these limits (see the class); its worker starts on the first step."""
        super().__init__(tools, output_fields, execution_timeout=execution_timeout)
        self.cpu_seconds, self.memory_bytes = cpu_seconds, memory_bytes
        self.read_paths = tuple(Path(p).resolve() for p in read_paths)
        self._own_scratch = scratch is None
        self.scratch = Path(tempfile.mkdtemp(prefix="owl-memory-scratch-") if scratch is None else scratch).resolve()

    def worker_command(self, script: Path) -> list[str]:
        """dspy's worker script, mounted read-only, run by the host's Python runtime inside bwrap."""
        python = Path(sys.executable).resolve()
        return [*bwrap_command(self.read_paths, self.scratch, ((script, WORKER),)), str(python), "-I", "-S", WORKER]

    def limit_worker(self) -> None:
        """CPU and memory limits, set in the child before bwrap starts (the worker inherits them)."""
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_AS, (self.memory_bytes, self.memory_bytes))

    def execute(self, code: str, variables: dict[str, Any] | None = None) -> Any:
        """Run one step; a MemoryError names the memory limit."""
        try:
            return super().execute(code, variables)
        except CodeExecutionError as exc:
            if not str(exc).startswith("MemoryError"):
                raise
            raise CodeExecutionError(f"{exc} (the sandbox's memory limit is {self.memory_bytes >> 20} MiB)") from exc

    def _raise_terminal_error(self, message: str, cause: BaseException | None = None) -> NoReturn:
        """dspy's hook on a dead or stuck worker: a limit hit becomes an [Error] and the next step gets a fresh
        worker; anything else ends the session, as in dspy."""
        limit = self._limit_hit(message)
        self._kill()
        if limit is None:
            self._ended = True
            raise CodeInterpreterError(message) from cause
        raise CodeExecutionError(f"{limit}: the sandbox stopped the code and restarted its worker, so variables "
                                 "from earlier steps are gone") from cause

    def _limit_hit(self, message: str) -> str | None:
        """Which limit stopped the worker, or None when it was something else."""
        if "execution timeout" in message:
            return f"LimitExceeded: the code ran longer than {self.execution_timeout:g} s (wall-time limit per step)"
        with contextlib.suppress(subprocess.TimeoutExpired):
            if "exited" in message and self._process is not None and self._process.wait(timeout=5) in _CPU_KILLED:
                return f"LimitExceeded: the code used more than {self.cpu_seconds} CPU seconds (the worker's CPU limit)"
        return None

    def shutdown(self) -> None:
        """Stop the worker; remove the scratch folder when this interpreter made it."""
        super().shutdown()
        if self._own_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


class Sandbox:
    """An interpreter factory for dspy.RLM (`interpreter_factory=Sandbox()`): one BwrapInterpreter per run.

    Checks on creation that bwrap is installed and can start a confined Python here (ConfigError otherwise).

    Args:
        read_paths: files or folders the code may read (read-only).
        scratch: the folder the code may write (a fresh temp folder per run, removed afterwards, when None).
        execution_timeout, cpu_seconds, memory_bytes: the limits of each BwrapInterpreter (see there).
    """

    execution_instructions = BwrapInterpreter.execution_instructions
    __name__ = "Sandbox"  # what run() records as the interpreter in the trajectory

    def __init__(self, read_paths: Iterable[str | Path] = (), scratch: str | Path | None = None,
                 execution_timeout: float | None = EXECUTION_TIMEOUT, cpu_seconds: int = CPU_SECONDS,
                 memory_bytes: int = MEMORY_BYTES):
        self.read_paths, self.scratch, self.execution_timeout = tuple(read_paths), scratch, execution_timeout
        self.cpu_seconds, self.memory_bytes = cpu_seconds, memory_bytes
        _check_bwrap()

    def __call__(self) -> BwrapInterpreter:
        """A fresh sandboxed interpreter."""
        return BwrapInterpreter(read_paths=self.read_paths, scratch=self.scratch,
                                execution_timeout=self.execution_timeout, cpu_seconds=self.cpu_seconds,
                                memory_bytes=self.memory_bytes)


def _check_bwrap() -> None:
    """ConfigError saying how to fix it unless bwrap can start a confined Python on this machine."""
    if shutil.which("bwrap") is None:
        raise ConfigError("the sandbox needs bubblewrap: install it from your OS packages (Debian/Ubuntu: "
                          "`apt-get install bubblewrap`), or run without --sandbox (the default interpreter is "
                          "not a sandbox)")
    python = Path(sys.executable).resolve()
    with tempfile.TemporaryDirectory(prefix="owl-memory-probe-") as tmp:
        cmd = [*bwrap_command((), Path(tmp)), str(python), "-I", "-S", "-c", "pass"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ConfigError(f"bubblewrap cannot start a sandbox here ({done.stderr.strip()[:200]}); it needs "
                          "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or root")
