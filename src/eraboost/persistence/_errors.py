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
