"""Errors of the command line: :class:`CLIError` and the one line an error
prints. Standard library only."""

#: Longest error line printed (the rest is cut).
_MAX_ERROR_CHARS = 1000


class CLIError(Exception):
    """An error of the user's input: printed on one line, exit status 1."""


def _error_line(exc):
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    if isinstance(exc, MemoryError) and not line.startswith("not enough memory"):
        line = f"not enough memory: {line}"
    if len(line) > _MAX_ERROR_CHARS:
        line = line[: _MAX_ERROR_CHARS - 3] + "..."
    return line
