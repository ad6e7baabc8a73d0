"""The zip container: ``model.json``, the ``.npy`` members, their digests.

The zip's comment holds a SHA-256 of each member, which detects damage
(not edits: whoever edits a file can write new digests). Each array is
declared in ``model.json`` with its dtype and shape; its member's size is
checked against that shape, and the shape against the model's bounds,
before the member is read.
"""

import hashlib
import io
import json
import math
import zipfile

import numpy as np

from ._errors import refuse
from ._limits import MAX_RATIO, RATIO_FROM

JSON_MEMBER = "model.json"
# the zip comment: this prefix, then "NAME HEXDIGEST" lines, one per member
CHECKSUM = b"eraboost-sha256:"


def npy_size(dtype, shape):
    """Bytes of the .npy (format 1.0) of an array of this dtype and shape."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer,
        {
            "descr": np.lib.format.dtype_to_descr(dtype),
            "fortran_order": False,
            "shape": tuple(shape),
        },
    )
    return buffer.tell() + math.prod(shape) * dtype.itemsize


class DeclaredArrays:
    """The arrays of a model file: declared in ``model.json``, checked
    against the bounds of the model before any member is read."""

    def __init__(self, archive, declared, digests):
        self.archive = archive
        self.declared = declared
        self.digests = digests
        self.expected = {}

    def expect(self, name, dtype, shape):
        """Declare the array ``name``: its dtype and shape, where an int is
        an exact length and ``("max", n)`` a bound."""
        self.expected[name] = (np.dtype(dtype), shape)

    def check_declarations(self, infos):
        """Each declared array is expected, of its dtype, within its bounds,
        and its member is exactly the size its shape makes."""
        declared = self.declared
        if not isinstance(declared, dict):
            refuse("arrays must be a JSON object")
        extra = sorted(set(declared) - set(self.expected))
        if extra:
            refuse(
                "the file declares undeclared arrays "
                f"({', '.join(map(repr, extra[:5]))})"
            )
        missing = sorted(set(self.expected) - set(declared))
        if missing:
            refuse(f"the array {missing[0]} is missing")
        self.shapes = {}
        for name, (dtype, pattern) in self.expected.items():
            decl = declared[name]
            if not (isinstance(decl, dict) and set(decl) == {"dtype", "shape"}):
                refuse(f"the array {name} must be declared as {{'dtype', 'shape'}}")
            if decl["dtype"] != json.loads(
                json.dumps(np.lib.format.dtype_to_descr(dtype))
            ):
                refuse(
                    f"the array {name} has dtype {str(decl['dtype'])[:80]}; expected "
                    f"{dtype}"
                )
            shape = decl["shape"]
            if not (
                isinstance(shape, list)
                and len(shape) == len(pattern)
                and all(type(s) is int and s >= 0 for s in shape)
            ):
                refuse(
                    f"the array {name} has a shape that is not {len(pattern)} lengths"
                )
            for s, p in zip(shape, pattern):
                if isinstance(p, tuple) and s > p[1]:
                    refuse(
                        f"the array {name} has shape {tuple(shape)}: the model's "
                        f"parameters allow at most {p[1]} along an axis"
                    )
                if isinstance(p, int) and s != p:
                    refuse(
                        f"the array {name} has shape {tuple(shape)}; expected {p} "
                        "along an axis"
                    )
            member = f"{name}.npy"
            info = infos.get(member)
            if info is None:
                refuse(f"the member {member} is missing")
            size = npy_size(dtype, shape)
            if info.file_size != size:
                refuse(
                    f"the member {member} is {info.file_size} bytes; its declared "
                    f"shape {tuple(shape)} makes {size}"
                )
            if info.file_size > RATIO_FROM and info.file_size > (
                MAX_RATIO * info.compress_size
            ):
                refuse(
                    f"the member {member} compresses {info.file_size:,} bytes "
                    f"into {info.compress_size:,}: more than {MAX_RATIO} to 1, "
                    "which no array of a model does"
                )
            self.shapes[name] = tuple(shape)

    def __getitem__(self, name):
        dtype, _ = self.expected[name]
        shape = self.shapes[name]
        content = read_member(self.archive, f"{name}.npy", self.digests)
        try:
            array = np.load(io.BytesIO(content), allow_pickle=False)
        except Exception as exc:
            refuse(f"the member {name}.npy is not a NumPy array ({type(exc).__name__})")
        if array.dtype != dtype or array.shape != shape or not array.flags.c_contiguous:
            refuse(f"the member {name}.npy does not hold the declared array")
        return array


def read_json_member(archive, digests, max_values):
    """``model.json``'s content, read by pieces: its values (items, lists,
    objects: its commas and opening brackets) are counted as it is read,
    and a file holding more than ``max_values`` is refused before it is
    read whole or parsed."""
    pieces, n_values = [], 1
    with archive.open(JSON_MEMBER) as f:
        while piece := f.read(2**20):
            n_values += piece.count(b",") + piece.count(b"[") + piece.count(b"{")
            if n_values > max_values:
                refuse(
                    f"its model.json holds more than {max_values:,} values (items, "
                    "lists and objects), more than a model of eraboost writes"
                )
            pieces.append(piece)
    content = b"".join(pieces)
    if hashlib.sha256(content).hexdigest() != digests.get(JSON_MEMBER):
        refuse(
            "damaged model file: its contents do not match the checksum written with "
            "them"
        )
    return content


def read_member(archive, name, digests):
    """A member's content (its size already checked), checked against its
    digest."""
    with archive.open(name) as f:
        content = f.read()
    if hashlib.sha256(content).hexdigest() != digests.get(name):
        refuse(
            "damaged model file: its contents do not match the checksum written with "
            "them"
        )
    return content


# -- writing and checking the container -------------------------------------------
def write_archive(doc, arrays):
    """The zip of ``model.json`` and the arrays, with the members' digests
    as its comment."""
    buffer = io.BytesIO()
    digests = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        content = json.dumps(doc, allow_nan=True).encode()
        zf.writestr(JSON_MEMBER, content)
        digests.append((JSON_MEMBER, content))
        for name, array in arrays.items():
            out = io.BytesIO()
            np.lib.format.write_array(
                out, np.ascontiguousarray(array), version=(1, 0), allow_pickle=False
            )
            zf.writestr(f"{name}.npy", out.getvalue())
            digests.append((f"{name}.npy", out.getvalue()))
        zf.comment = CHECKSUM + b"".join(
            f"\n{name} {hashlib.sha256(c).hexdigest()}".encode() for name, c in digests
        )
    return buffer.getvalue()


def read_digests(comment):
    if not comment.startswith(CHECKSUM):
        refuse("damaged model file: it has no checksum (unknown zip comment)")
    digests = {}
    for line in comment[len(CHECKSUM) :].decode("ascii", "replace").split("\n")[1:]:
        name, _, digest = line.partition(" ")
        digests[name] = digest
    return digests
