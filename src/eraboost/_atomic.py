"""Files written whole or not at all.

Every file eraboost writes (models, prediction tables, report files) goes
through :func:`atomic_write`: the data goes to a temporary file in the
destination's folder (``NAME.tmp-XXXXXXXX``, visible beside it), is flushed
to disk (``fsync``) and renamed over the destination only once complete. A
write that fails part-way (disk full, file size limit, an error of the
writer, Ctrl-C, SIGTERM) removes its own temporary file and leaves whatever
was at the destination untouched, e.g. the previous good model. Only what no
process can catch (SIGKILL, a power cut) can leave a ``NAME.tmp-XXXXXXXX``
behind, which may be deleted.

A destination that exists and is not a regular file (a device such as
``/dev/stdout``, a named pipe) is written in place: it is never replaced,
renamed or deleted, whatever happens.
"""

import os
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager, suppress


class _Terminated(BaseException):
    """SIGTERM arrived while a temporary file was written."""


def _raise_terminated(signum, frame):
    raise _Terminated


def _catch_sigterm():
    """Make SIGTERM raise while a file is written (so that its temporary
    file is removed); returns the handler to restore, or None when SIGTERM
    is left alone (ignored, or not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        previous = signal.getsignal(signal.SIGTERM)
        if previous in (signal.SIG_IGN, None):
            return None
        signal.signal(signal.SIGTERM, _raise_terminated)
    except (ValueError, OSError):
        return None
    return previous


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_folder(folder):
    """Make the rename durable (best effort: not every system allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_write(path, mode="wb", **open_kwargs):
    """Open a file that appears at ``path`` only once completely written.

    Parameters
    ----------
    path : str or Path
        Destination. A symbolic link is followed (the file it points to is
        replaced, the link stays).
    mode : {"wb", "w"}, default="wb"
        Binary or text.
    **open_kwargs
        Passed to :func:`open` (``newline``, ``encoding``...).

    Yields
    ------
    file : file object
        Write the whole content to it. When the block ends normally, the
        file is flushed, synced and renamed to ``path`` (with the permissions
        of the file it replaces, or those a new file would get); when it
        raises, the temporary file is deleted and ``path`` is left as it was.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    target = os.path.realpath(os.fspath(path))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(
            f"cannot write {os.fspath(path)}: it is a folder, not a file"
        )
    if info is not None and not stat.S_ISREG(info.st_mode):
        # a device or a pipe the caller names: write into it, never replace
        # or delete it
        with open(target, mode, **open_kwargs) as f:
            yield f
        return
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(
            f"cannot write {os.fspath(path)}: the folder {folder} does not exist"
        )
    previous = _catch_sigterm()
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f"{os.path.basename(target)}.tmp-", dir=folder
        )
        try:
            with os.fdopen(fd, mode, **open_kwargs) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            permissions = (
                stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
            )
            os.chmod(tmp, permissions)
            os.replace(tmp, target)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp)
            raise
    except _Terminated:
        # the temporary file is gone: now terminate as SIGTERM would have
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
            previous = None
        signal.raise_signal(signal.SIGTERM)
        raise InterruptedError(
            f"writing {os.fspath(path)} was stopped by SIGTERM"
        ) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    _fsync_folder(folder)
