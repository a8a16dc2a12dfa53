"""An offline sandbox for the agent's code: dspy's interpreter worker run under bubblewrap (`bwrap`).

The worker is dspy's own LocalInterpreter worker (stdlib only), started inside a bwrap container with no network
(a fresh network namespace: not even the host's loopback), no environment, a read-only view of the system
libraries and the Python runtime, read-only the paths it is given, and one writable folder, the scratch folder
(also its working and temp directory). Tools still run on the host: a tool call in the sandbox travels over the
worker's stdin/stdout pipe and the host answers it (dspy's CodeInterpreter protocol), with every cap intact.
Needs Linux and bubblewrap from the OS packages (`apt-get install bubblewrap`); nothing is downloaded.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import ConfigError
from .dspy_compat import CommandInterpreter

SCRATCH = "/scratch"  # where the scratch folder appears inside the sandbox
WORKER = "/sandbox/worker.py"  # where dspy's worker script appears inside the sandbox
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
        execution_timeout: seconds one execution may take before the worker is killed.
    """

    execution_instructions = (
        "Code runs as Python in a sandbox: no network, no files but /scratch (writable; your working directory) "
        "and any paths you were told about. State persists across steps. Host tools and SUBMIT are global "
        "functions; call the tools for prompt, memory and ontology data.")

    def __init__(self, tools=None, output_fields=None, *, read_paths=(), scratch: str | Path | None = None,
                 execution_timeout: float | None = 120.0):
        super().__init__(tools, output_fields, execution_timeout=execution_timeout)
        self.read_paths = tuple(Path(p).resolve() for p in read_paths)
        self._own_scratch = scratch is None
        self.scratch = Path(tempfile.mkdtemp(prefix="owl-memory-scratch-") if scratch is None else scratch).resolve()

    def worker_command(self, script: Path) -> list[str]:
        """dspy's worker script, mounted read-only, run by the host's Python runtime inside bwrap."""
        python = Path(sys.executable).resolve()
        return [*bwrap_command(self.read_paths, self.scratch, ((script, WORKER),)), str(python), "-I", "-S", WORKER]

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
        execution_timeout: seconds one execution may take.
    """

    execution_instructions = BwrapInterpreter.execution_instructions
    __name__ = "Sandbox"  # what run() records as the interpreter in the trajectory

    def __init__(self, read_paths=(), scratch: str | Path | None = None, execution_timeout: float | None = 120.0):
        self.read_paths, self.scratch, self.execution_timeout = tuple(read_paths), scratch, execution_timeout
        _check_bwrap()

    def __call__(self) -> BwrapInterpreter:
        """A fresh sandboxed interpreter."""
        return BwrapInterpreter(read_paths=self.read_paths, scratch=self.scratch,
                                execution_timeout=self.execution_timeout)


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
