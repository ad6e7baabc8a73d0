"""Early stopping on whole validation eras, across the workers.

The single-machine fit holds out whole eras (``_eras.held_out_eras``, from
its seed) and trains on the others. The driver draws the same eras from
the eras' row counts (and, for a classifier, their class counts); the rows
of each side become dask arrays of their own (the table's order kept), the
training rows placed and fitted as a table without validation, the
validation eras placed on the workers in :class:`ValidationShard` actors.
After each iteration the validation shards add its trees to their raw
predictions; every shard returns its loss sum and weight sum, and the
driver reduces them to the single machine's mean loss and applies its
stopping rule (``_should_stop``).
"""

import numpy as np

from .._eras import check_eras, check_validation_size, held_out_eras
from ._placement import Inventory
from ._worker import EraShard


def block_codes(eras, labels):
    """The fit's era codes of a chunk's rows (codes into ``labels``)."""
    code_of = {label: i for i, label in enumerate(labels.tolist())}
    codes, local = check_eras(eras, eras.shape[0])
    return np.array([code_of[v] for v in local.tolist()], dtype=np.int32)[codes]


def _class_counts(eras, y, labels, classes):
    """Rows of each class in each era, for one chunk."""
    counts = np.zeros((labels.shape[0], classes.shape[0]), dtype=np.int64)
    np.add.at(counts, (block_codes(eras, labels), np.searchsorted(classes, y)), 1)
    return counts


def validation_eras(local, client, inventory, eras, y, n_samples):
    """The mask of the eras (codes into ``inventory.labels``) that the
    single machine holds out for early stopping, or None when it holds out
    none (``validation_fraction=None``).

    Warns, as the single machine does, when a single era is left to train
    on.
    """
    if local.validation_fraction is None:
        return None
    per_era = None
    classes = getattr(local, "classes_", None)
    if classes is not None:
        from dask import delayed

        parts = client.compute(
            [
                delayed(_class_counts)(e, b, inventory.labels, classes)
                for e, b in zip(eras.to_delayed().ravel(), y.to_delayed().ravel())
            ],
            sync=True,
        )
        per_era = np.sum(parts, axis=0)
    held = held_out_eras(
        inventory.counts,
        local.validation_fraction,
        int(local._random_seed % (2**32)),
        per_era=per_era,
        classes=classes,
    )
    n_eras = inventory.labels.shape[0]
    check_validation_size(local.validation_fraction, n_samples, int(held.sum()), n_eras)
    return held


def _keep_rows(block, eras, labels, keep):
    return block[keep[block_codes(eras, labels)]]


def select_eras(arrays, eras, inventory, keep):
    """The rows of the eras in ``keep`` (a mask of the era codes): each
    array cut to them chunk by chunk, the table's order kept, with known
    row chunks; and their inventory (the same labels and codes)."""
    import dask.array as da
    from dask import delayed

    sizes = [int(c[keep[codes]].sum()) for codes, c in inventory.block_counts]
    blocks_e = eras.to_delayed().ravel()
    out = []
    for arr in arrays:
        if arr is None:
            out.append(None)
            continue
        blocks = arr.to_delayed().ravel()
        tail = arr.shape[1:]
        pieces = [
            da.from_delayed(
                delayed(_keep_rows, pure=True)(b, e, inventory.labels, keep),
                shape=(n, *tail),
                dtype=arr.dtype,
            )
            for b, e, n in zip(blocks, blocks_e, sizes)
        ]
        out.append(da.concatenate(pieces, axis=0))
    block_counts = [
        (codes[keep[codes]], c[keep[codes]]) for codes, c in inventory.block_counts
    ]
    return out, Inventory(
        inventory.labels, np.where(keep, inventory.counts, 0), block_counts
    )


class ValidationShard(EraShard):
    """The rows of some whole validation eras and their raw predictions
    (no gradients: no tree grows on them)."""

    def start(self, loss, baseline):
        self.loss = loss
        self.K = baseline.shape[1]
        self.raw = np.tile(baseline, (self.n_rows(), 1)).astype(np.float64)


class EarlyStopping:
    """The driver's side: the scores of the single machine's
    ``_check_early_stopping_loss``, from the shards' reduced loss sums,
    appended to ``local``'s ``train_score_`` and ``validation_score_``.

    Parameters
    ----------
    local : estimator
        The single-machine estimator being fitted.
    train, validation : Cluster or None
        The training shards, and the validation shards (None without
        validation eras).
    """

    def __init__(self, local, train, validation):
        self.local = local
        self.train = train
        self.validation = validation

    @staticmethod
    def _mean_loss(cluster):
        sums = np.asarray(cluster.call("loss_sum"), dtype=np.float64)
        return float(sums[:, 0].sum() / sums[:, 1].sum())

    def score(self):
        """Append the current scores; True when the fit should stop."""
        local = self.local
        local.train_score_.append(-self._mean_loss(self.train))
        if self.validation is None:
            return local._should_stop(local.train_score_)
        local.validation_score_.append(-self._mean_loss(self.validation))
        return local._should_stop(local.validation_score_)

    def step(self, stage):
        """After an iteration (``stage``: its predictors): the validation
        shards add its trees, then score; True when the fit should stop."""
        if self.validation is not None:
            self.validation.call(
                "add_stages", [stage], self.local._bin_mapper.missing_bin_
            )
        return self.score()


__all__ = [
    "EarlyStopping",
    "ValidationShard",
    "block_codes",
    "select_eras",
    "validation_eras",
]
