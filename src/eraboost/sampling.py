"""Per-tree random draws of features, rows and whole eras.

The boosters' ``colsample_bytree``, ``subsample`` and ``era_subsample``:
each tree sees a random share of the features (LightGBM's
``feature_fraction``), and each iteration a random share of the training
rows drawn without replacement (stochastic gradient boosting) or of whole
eras (every row of a drawn era, none of the others). Every draw comes from
one NumPy generator seeded by ``random_state``, in the main thread, so that
the model does not depend on the number of threads.
"""

from dataclasses import dataclass

import numpy as np

__all__ = ["TreeSampler", "draw_count"]


def draw_count(fraction, n):
    """How many of ``n`` items a share ``fraction`` draws: ``round(fraction
    * n)``, at least 1 (the float product rounded, so that 0.1 of 300 is 30)."""
    return max(1, min(n, round(fraction * n)))


@dataclass(eq=False)
class TreeSampler:
    """Draws the features of each tree and the rows of each iteration.

    Parameters
    ----------
    rng : numpy Generator
    n_features, n_samples : int
    colsample_bytree, subsample, era_subsample : float in (0, 1]
    era_codes : ndarray of int of shape (n_samples,) or None
        Era of each training row (any integer codes); required when
        ``era_subsample < 1``.
    """

    rng: np.random.Generator
    n_features: int
    n_samples: int
    colsample_bytree: float = 1.0
    subsample: float = 1.0
    era_subsample: float = 1.0
    era_codes: np.ndarray | None = None

    def __post_init__(self):
        if self.era_subsample < 1.0:
            self.era_labels, self.era_of_row = np.unique(
                self.era_codes, return_inverse=True
            )
            self.era_of_row = self.era_of_row.ravel()

    @property
    def samples_rows(self):
        """Whether iterations grow their trees on a subset of the rows."""
        return self.subsample < 1.0 or self.era_subsample < 1.0

    def tree_features(self):
        """Sorted uint32 features of the next tree, or None for all."""
        if self.colsample_bytree >= 1.0:
            return None
        k = draw_count(self.colsample_bytree, self.n_features)
        drawn = self.rng.choice(self.n_features, k, replace=False, shuffle=False)
        return np.sort(drawn).astype(np.uint32)

    def iteration_rows(self):
        """Boolean mask of the training rows of the next iteration, or None.

        Whole eras are drawn first (``era_subsample``), then rows among
        theirs (``subsample``).
        """
        if not self.samples_rows:
            return None
        if self.era_subsample < 1.0:
            n_eras = self.era_labels.size
            eras = self.rng.choice(
                n_eras,
                draw_count(self.era_subsample, n_eras),
                replace=False,
                shuffle=False,
            )
            keep = np.zeros(n_eras, dtype=bool)
            keep[eras] = True
            mask = keep[self.era_of_row]
        else:
            mask = np.ones(self.n_samples, dtype=bool)
        if self.subsample < 1.0:
            rows = np.flatnonzero(mask)
            drawn = self.rng.choice(
                rows.size,
                draw_count(self.subsample, rows.size),
                replace=False,
                shuffle=False,
            )
            mask = np.zeros(self.n_samples, dtype=bool)
            mask[rows[drawn]] = True
        return mask
