"""Errors a user can cause; the CLI prints them in one line and exits with code 2."""

from __future__ import annotations

import errno


class MedlensError(Exception):
    """Base class for every error caused by user input (files, specs, servers)."""


class InputError(MedlensError):
    """A benchmark or prediction file is malformed.

    The message names the file, the row or line, and the field.
    """

    def __init__(self, path: object, where: str | None, problem: str) -> None:
        self.path = str(path)
        self.where = where
        self.problem = problem
        location = f"{self.path}, {where}" if where else self.path
        super().__init__(f"{location}: {problem}")


class SpecError(MedlensError):
    """A benchmark or model spec cannot be understood."""


class RunMismatchError(MedlensError):
    """An existing run directory was made with a different spec."""


class StopAfterInFlight(MedlensError):
    """Raised from a run's progress callback to stop it gently: no new request is sent, the
    requests already sent (and paid for) are awaited and stored, then the run stops with this
    error (a study's budget). A rerun resumes after them."""


class ItemError(Exception):
    """One item cannot be prepared (e.g. its image does not decode); the run records it and goes on."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


EXIT_STORAGE = 4
"""Exit code of a command stopped because a file could not be written or read (disk full, no
permission, read-only folder): what was written is kept, so rerunning resumes."""

_STORAGE_REMEDIES = {
    "ENOSPC": "free space on that disk or point medlens at another folder",
    "EDQUOT": "free space within your disk quota or point medlens at another folder",
    "EFBIG": "the file outgrew the size this system allows; point medlens at another folder",
    "EACCES": "make the folder writable for you or point medlens at another folder",
    "EPERM": "make the folder writable for you or point medlens at another folder",
    "EROFS": "the folder is on a read-only file system; point medlens at another folder",
}


class StorageError(MedlensError):
    """A file medlens writes (a run folder, a report) could not be written: one line naming the
    file, the system's reason and the remedy; the CLI exits with :data:`EXIT_STORAGE`."""

    exit_code = EXIT_STORAGE

    def __init__(self, path: object, error: OSError, doing: str = "write") -> None:
        self.path = str(path)
        code = errno.errorcode.get(error.errno or 0, "")
        reason = error.strerror or str(error) or type(error).__name__
        remedy = _STORAGE_REMEDIES.get(code, "check the disk and the folder's permissions")
        named = f" ({code})" if code else ""
        super().__init__(
            f"{self.path}: cannot {doing}: {reason}{named}; {remedy}, then rerun the same command "
            "(what was already written is kept: a run resumes from its records)"
        )
