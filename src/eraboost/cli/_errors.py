"""Errors of the command line: :class:`CLIError`, the one line an error
prints, and the escaping of text taken from files. Standard library only."""

#: Longest error line printed (the rest is cut).
_MAX_ERROR_CHARS = 1000


class CLIError(Exception):
    """An error of the user's input: printed on one line, exit status 1."""


def escaped(text, limit=None):
    """``text`` with every character that is not printable (terminal escape
    codes, newlines, NUL and other raw bytes) written as its Python escape
    (``\\x1b``, ``\\n``), cut to ``limit`` characters (ending ``...``).

    Any text taken from a file (a column name, a value, a model file's
    strings) passes through here before it is shown, so that a file cannot
    write to the terminal nor fake a line of output.
    """
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _error_line(exc):
    """The first line of an error's message, escaped and cut (one line)."""
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    if isinstance(exc, MemoryError) and not line.startswith("not enough memory"):
        line = f"not enough memory: {line}"
    return escaped(line, _MAX_ERROR_CHARS)
