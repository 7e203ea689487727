"""Files the command writes: whole or not at all, with the permissions any other tool would give.

A temporary file (which ``tempfile`` creates private, 0600) is renamed into place, so a failure
never leaves half a file; it is given ``0666`` less the umask first, so the result reads as a
file written by ``open()`` does (0644 under the usual umask 022).
"""

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically", "write_all_atomically", "normal_mode", "path_problem"]


def normal_mode() -> int:
    """The mode ``open()`` gives a new file under the current umask."""
    umask = os.umask(0)     # the only way to read it; set straight back
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: Path, text: str):
    """Write ``text`` to ``path`` via a temporary file beside it, with :func:`normal_mode`."""
    write_all_atomically({path: text})


def write_all_atomically(files: dict):
    """Write each ``{path: text}`` as :func:`write_atomically` does, every temporary file before
    the first is renamed into place: a path that cannot be written (a missing permission, a file
    where a directory must be) leaves none of the files behind."""
    temporaries = []
    try:
        for path, text in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            except OSError as error:        # name the file asked for, not the temporary one
                raise type(error)(error.errno, error.strerror, str(path)) from None
            temporaries.append((temporary, path))
            with os.fdopen(descriptor, "w") as file:
                file.write(text)
            os.chmod(temporary, normal_mode())
        for temporary, path in list(temporaries):
            os.replace(temporary, path)
            temporaries.remove((temporary, path))
    except BaseException:
        for temporary, _ in temporaries:
            os.unlink(temporary)
        raise


def path_problem(error: OSError) -> str:
    """What ``error`` says about a path, in the user's terms: the path they named (``os.replace``
    names the temporary file first and the target second) and what to do about it."""
    path = error.filename2 or error.filename
    if path is None:
        return str(error)
    if isinstance(error, FileExistsError) and not Path(path).is_dir():
        return f"{path} is a file, and a directory is needed there; remove it or choose another path"
    if isinstance(error, IsADirectoryError):
        return f"{path} is a directory; name a file"
    if isinstance(error, NotADirectoryError):
        return f"{path}: a part of this path is a file, not a directory; choose another path"
    return f"{path}: {error.strerror or error}"
