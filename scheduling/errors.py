"""Errors for bad input: each names where the problem is and what it is."""

from __future__ import annotations


class InputError(ValueError):
    """A user-supplied file or value is invalid.

    The message always names the file, the line or job id, the field and the problem, so that a
    user can fix the input without reading code. The CLI turns it into exit code 2.
    """

    def __init__(
        self,
        problem: str,
        *,
        file: str | None = None,
        line: int | None = None,
        job: str | None = None,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.file = file
        self.line = line
        self.job = job
        self.field = field
        super().__init__(self.describe())

    def describe(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.job is not None:
            where.append(f"job {self.job!r}")
        if self.field:
            where.append(f"field {self.field!r}")
        prefix = ", ".join(where)
        return f"{prefix}: {self.problem}" if prefix else self.problem

    def located(self, file: str) -> InputError:
        """The same error with the file name filled in (if it was not known yet)."""
        if self.file:
            return self
        return InputError(self.problem, file=file, line=self.line, job=self.job, field=self.field)


class UnsupportedInstance(ValueError):
    """An algorithm was asked to run an instance whose model it does not support (exit code 2)."""


class ScheduleError(RuntimeError):
    """An algorithm proposed something the engine cannot commit (a bug in that algorithm)."""
