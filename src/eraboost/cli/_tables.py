"""Reading and writing the tables of the command line (parquet or CSV).

Only the columns asked for are read, batch by batch, straight into
preallocated feature arrays: columns of one type give one 2-D array of that
type (int8 columns stay int8, no float64 copy). A mix of small integer
(int8, uint8, int16, uint16) and float columns gives a
:class:`~eraboost._engine.binning.MixedMatrix`: the integer columns in their
common type, the float ones in float64, which the estimators bin and predict
without a float64 copy of every column. Other mixes give one array of the
columns' common type. An integer feature with missing values turns the
features into one float array (NaN).
CSV files carry no types: their integer columns are read as the smallest
integer type that holds their values (int8 for the 0..4 features of a
Numerai table), as a parquet file would have stored them.

Tables are written whole or not at all (:func:`eraboost._atomic.atomic_write`),
as parquet or CSV by the extension of the file name; an unknown extension is
an error. Needs ``pyarrow`` (``pip install eraboost[cli]``), imported lazily.
"""

import bz2
import gzip
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from .._engine.binning import INT_DTYPES, MixedMatrix
from ._errors import escaped

_BATCH_ROWS = 1 << 16


class TableError(ValueError):
    """A table that cannot be used: unreadable, missing column, bad value."""


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.csv
        import pyarrow.parquet
    except ImportError:
        raise TableError(
            "reading tables needs pyarrow: pip install 'eraboost[cli]'"
        ) from None
    return pyarrow


_COMPRESSION = {".gz": "gzip", ".bz2": "bz2"}
# compressed streams over an open file, leaving it open when they close
_COMPRESSORS = {
    "gzip": lambda f: gzip.GzipFile(fileobj=f, mode="wb"),
    "bz2": lambda f: bz2.BZ2File(f, "wb"),
}
_OUTPUT_SUFFIXES = (".parquet", ".pq", ".csv", ".csv.gz", ".csv.bz2")


def table_format(path):
    """``"csv"`` for .csv/.csv.gz/.csv.bz2 files, ``"parquet"`` otherwise."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    return "csv" if suffixes and suffixes[-1] in (".csv", ".txt") else "parquet"


def check_output_format(path):
    """Raise a TableError unless ``path`` ends in a table extension we write."""
    name = Path(path).name.lower()
    if not name.endswith(_OUTPUT_SUFFIXES):
        raise TableError(
            f"cannot tell the format of {path} from its extension: name it "
            f"{', '.join(_OUTPUT_SUFFIXES[:-1])} or {_OUTPUT_SUFFIXES[-1]}"
        )
    return table_format(path)


#: Longest part of a reader's message shown (it may quote the file's bytes).
_MAX_DETAIL_CHARS = 160


def _first_line(exc):
    """The first line of a reader's error, escaped and cut: it may quote
    the file's content, raw bytes included."""
    text = str(exc).strip().splitlines()
    return escaped(text[0] if text else type(exc).__name__, _MAX_DETAIL_CHARS)


def _binary_byte(path, n_bytes=4096):
    """The offset of the first NUL byte among the first ``n_bytes`` of a
    file (text files have none), or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(n_bytes)
    except OSError:
        return None
    at = head.find(b"\0")
    return None if at < 0 else at


def _columns_hint(names, columns):
    """Close matches (difflib) of missing column names, or the table's
    columns when none is close: what the user may have meant."""
    from difflib import get_close_matches

    matches = {}
    for name in names[:5]:
        close = get_close_matches(str(name), columns, n=1)
        if close:
            matches[name] = close[0]
    if len(matches) == 1 and len(names) == 1:
        return f"did you mean {matches[names[0]]!r}?"
    if matches:
        pairs = ", ".join(f"{m!r} for {n!r}" for n, m in matches.items())
        return f"did you mean {pairs}?"
    shown = ", ".join(repr(c) for c in columns[:10])
    more = f", ... ({len(columns)} in all)" if len(columns) > 10 else ""
    return f"its columns are {shown}{more}"


class Table:
    """An open table: its column names and a reader of chosen columns.

    Parameters
    ----------
    path : str or Path
        A parquet file or a CSV file (see :func:`table_format`).
    """

    def __init__(self, path):
        pa = _pyarrow()
        self.path = str(path)
        self.format = table_format(path)
        if not Path(path).is_file():
            raise TableError(f"cannot read {self.path}: no such file")
        try:
            if self.format == "parquet":
                self._file = pa.parquet.ParquetFile(self.path, memory_map=True)
                self.schema = self._file.schema_arrow
                self.n_rows = self._file.metadata.num_rows
            else:
                self._file = None
                with pa.csv.open_csv(self.path) as reader:
                    self.schema = reader.schema
                self.n_rows = None
        except (pa.ArrowException, OSError, ValueError) as exc:
            at = _binary_byte(self.path) if self.format == "csv" else None
            if at is not None:
                raise TableError(
                    f"cannot read {self.path} as csv: it is not a text file "
                    f"(a NUL byte at byte {at}); give a CSV text file or a "
                    ".parquet table"
                ) from None
            raise TableError(
                f"cannot read {self.path} as {self.format}: {_first_line(exc)}"
            ) from None
        self.columns = list(self.schema.names)

    def check_columns(self, names, what="column"):
        """Raise a TableError naming the columns of ``names`` not in the table."""
        missing = [c for c in names if c not in self.columns]
        if missing:
            shown = ", ".join(repr(c) for c in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise TableError(
                f"{self.path} has no {what} {shown}{more} "
                f"({len(missing)} of {len(names)} missing; "
                f"{_columns_hint(missing, self.columns)})"
            )

    def _columns_of_type(self, *checks):
        """Names of the columns whose type passes one of ``checks``
        (functions of ``pyarrow.types``)."""
        return [f.name for f in self.schema if any(c(f.type) for c in checks)]

    def categorical_columns(self):
        """Names of the text and dictionary (pandas category) columns."""
        t = _pyarrow().types
        return self._columns_of_type(t.is_dictionary, t.is_string, t.is_large_string)

    def numeric_columns(self):
        """Names of the integer, floating point and boolean columns."""
        t = _pyarrow().types
        return self._columns_of_type(t.is_integer, t.is_floating, t.is_boolean)

    def _batches(self, columns):
        """Schema of ``columns`` and an iterable of record batches of them."""
        pa = _pyarrow()
        try:
            if self.format == "parquet":
                schema = pa.schema([self.schema.field(c) for c in columns])
                return schema, self._file.iter_batches(
                    batch_size=_BATCH_ROWS, columns=columns
                )
            # CSV: whole-file type inference, then batches of the table
            opts = pa.csv.ConvertOptions(include_columns=columns)
            table = _small_integers(pa.csv.read_csv(self.path, convert_options=opts))
            return table.schema, table.to_batches(max_chunksize=_BATCH_ROWS)
        except (pa.ArrowException, OSError) as exc:
            raise TableError(f"cannot read {self.path}: {_first_line(exc)}") from None

    def read(self, features, others=()):
        """Read the feature array and other columns.

        Parameters
        ----------
        features : list of str
            Numeric columns, in this order, as the columns of ``X``.
        others : list of str
            Other columns (target, era, ids...), read as 1-D arrays.

        Returns
        -------
        X : ndarray or MixedMatrix of shape (n_rows, len(features))
            Fortran order. A :class:`MixedMatrix` when the feature columns
            mix small integer and float types (see the module docstring);
            otherwise of the common numpy type of the feature columns.
        columns : dict of str to ndarray
            The ``others`` columns.
        null_counts : dict of str to int
            The number of missing values in each of the ``others`` columns.
        """
        pa = _pyarrow()
        features, others = list(features), list(others)
        self.check_columns(features + others)
        wanted = list(dict.fromkeys(features + others))
        schema, batches = self._batches(wanted)
        if self.n_rows is None:
            batches = list(batches)
            n_rows = sum(b.num_rows for b in batches)
        else:
            n_rows = self.n_rows
        if not n_rows:
            raise TableError(
                f"{self.path} has no rows (only "
                f"{'a header' if self.format == 'csv' else 'its columns'}): "
                "give a table with data"
            )
        t = pa.types
        for name in features:
            kind = schema.field(name).type
            if t.is_null(kind):
                raise TableError(
                    f"feature column {name!r} of {self.path} is empty (no "
                    "value in any row): fill it, or leave it out of the features"
                )
            if not (t.is_integer(kind) or t.is_floating(kind) or t.is_boolean(kind)):
                raise TableError(
                    f"feature column {name!r} of {self.path} has type {kind}; "
                    "features must be numeric (integer, float or boolean)"
                )
        dtypes = [np.dtype(schema.field(c).type.to_pandas_dtype()) for c in features]
        dtype = np.result_type(*dtypes) if dtypes else np.float32
        X = _mixed_matrix(dtypes, n_rows)
        if X is None:
            X = np.empty((n_rows, len(features)), dtype=dtype, order="F")
        else:
            # each column's place in its group, to fill them batch by batch
            is_int = X.is_int
            place = np.where(is_int, np.cumsum(is_int), np.cumsum(~is_int)) - 1
        parts = {c: [] for c in others}
        start = 0
        try:
            for batch in batches:
                stop = start + batch.num_rows
                for j, name in enumerate(features):
                    col = batch.column(name)
                    if col.null_count and isinstance(X, MixedMatrix) and X.is_int[j]:
                        # this batch's earlier columns are already in X
                        X = _common_matrix(X, stop, dtype)
                    if col.null_count and X.dtype.kind in "iub":
                        X = X.astype(np.result_type(X.dtype, np.float32), order="F")
                    values = col.to_numpy(zero_copy_only=False)
                    if isinstance(X, MixedMatrix):
                        group = X.ints if X.is_int[j] else X.floats
                        group[start:stop, place[j]] = values
                    else:
                        X[start:stop, j] = values
                for name in others:
                    parts[name].append(batch.column(name))
                start = stop
        except (pa.ArrowException, OSError) as exc:
            raise TableError(f"cannot read {self.path}: {_first_line(exc)}") from None
        if start != n_rows:
            raise TableError(f"{self.path}: read {start} rows, expected {n_rows}")
        columns, null_counts = {}, {}
        for name, chunks in parts.items():
            arr = pa.chunked_array(chunks, type=schema.field(name).type)
            null_counts[name] = arr.null_count
            columns[name] = arr.to_numpy()
        return X, columns, null_counts


_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _mixed_matrix(dtypes, n_rows):
    """An empty :class:`MixedMatrix` for feature columns of ``dtypes`` that
    mix small integer (:data:`INT_DTYPES`, with one of them as their common
    type) and float32/float64 types; None for any other columns."""
    is_int = np.array([d in INT_DTYPES for d in dtypes], dtype=bool)
    is_float = np.array([d in _FLOAT_DTYPES for d in dtypes], dtype=bool)
    if not (n_rows and is_int.any() and is_float.any() and np.all(is_int | is_float)):
        return None
    common = np.result_type(*(d for d, i in zip(dtypes, is_int) if i))
    if common not in INT_DTYPES:
        return None
    return MixedMatrix(
        np.empty((n_rows, int(is_int.sum())), dtype=common, order="F"),
        np.empty((n_rows, int(is_float.sum())), dtype=np.float64, order="F"),
        is_int,
    )


def _common_matrix(X, n_read, dtype):
    """The features of a :class:`MixedMatrix` as one Fortran matrix of their
    common type ``dtype``: its first ``n_read`` rows copied (the float ones
    were converted from the file's float32 or float64, so back exactly)."""
    out = np.empty(X.shape, dtype=dtype, order="F")
    out[:n_read, X.is_int] = X.ints[:n_read]
    out[:n_read, ~X.is_int] = X.floats[:n_read]
    return out


def _small_integers(table):
    """The table with each 64-bit integer column cast to the smallest integer
    type holding its values (CSV reading infers int64 for every integer)."""
    pa = _pyarrow()
    import pyarrow.compute as pc

    for i, field in enumerate(table.schema):
        if not pa.types.is_int64(field.type):
            continue
        bounds = pc.min_max(table.column(i)).as_py()
        if bounds["min"] is None:
            continue
        for kind in (np.int8, np.int16, np.int32):
            info = np.iinfo(kind)
            if info.min <= bounds["min"] and bounds["max"] <= info.max:
                small = pa.from_numpy_dtype(kind)
                table = table.set_column(
                    i, field.with_type(small), table.column(i).cast(small)
                )
                break
    return table


def write_table(path, columns):
    """Write named 1-D arrays as a parquet or CSV file (by its extension).

    The file appears at ``path`` only once complete (see ``_atomic``).

    Parameters
    ----------
    path : str or Path
        Ending in .parquet, .pq, .csv, .csv.gz or .csv.bz2.
    columns : dict of str to ndarray
    """
    fmt = check_output_format(path)
    pa = _pyarrow()
    table = pa.table({name: pa.array(values) for name, values in columns.items()})
    compression = _COMPRESSION.get(Path(path).suffix.lower())
    try:
        with atomic_write(path, "wb") as f:
            if fmt == "parquet":
                pa.parquet.write_table(table, f)
            elif compression is None:
                pa.csv.write_csv(table, f)
            else:
                with _COMPRESSORS[compression](f) as stream:
                    pa.csv.write_csv(table, stream)
    except (pa.ArrowException, OSError) as exc:
        raise TableError(f"cannot write {path}: {_first_line(exc)}") from None
