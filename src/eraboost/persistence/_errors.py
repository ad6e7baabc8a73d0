"""The errors and the warning of model files, and how a refusal is raised."""


class ModelFileError(ValueError):
    """A file that is not a readable eraboost model file, or a model that
    cannot be saved to one."""


class ModelVersionWarning(UserWarning):
    """A model file written by other versions of eraboost, scikit-learn or
    NumPy than those loading it.

    The model passed every check of :func:`load_model`; re-saving it with
    :func:`save_model` records the current versions.
    """


class RefusedFile(Exception):
    """Why a model file is refused; turned into a one-line ModelFileError."""


def refuse(why):
    """Refuse the file being read, saying ``why``."""
    raise RefusedFile(why)


def type_name(obj):
    """``module.QualifiedName`` of the type of ``obj``."""
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def printable(text, limit=None):
    """``text`` on one line, every character that is not printable (a
    newline, a terminal's escape code...) written as its Python escape, cut
    to ``limit`` characters: a string taken from a file is shown as it is,
    never acted on by the terminal."""
    text = str(text)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
