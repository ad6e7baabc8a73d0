"""Model files that hold data, never objects: :func:`save_model`, :func:`load_model`.

A model file (format 2) is a zip of ``model.json`` and a few ``.npy``
arrays. ``model.json`` names the estimator's class (one of seven), its
parameters as plain JSON values, its fitted state as the fields that
its schema declares for that class, the shape and dtype of
each array member, free metadata, and the versions of eraboost,
scikit-learn and NumPy that wrote it. The zip's comment holds a SHA-256 of
each member, which detects damage (not edits: whoever edits a file can
write new digests).

Loading restores nothing: it reads data into known fields and rebuilds the
estimator from them, as LightGBM's text models and XGBoost's JSON models
are read.

1. ``model.json`` (at most :data:`MAX_JSON_BYTES`) is parsed; every key it
   holds must be a declared one, and every value has its declared type.
2. The estimator is made by its constructor, and its parameters are set
   with ``set_params`` and checked by scikit-learn's parameter constraints.
3. Each array's declared shape is checked against bounds that the
   parameters set (no more trees than ``max_iter``, no tree larger than
   ``max_leaf_nodes``, ``max_depth`` and the training rows allow...), and
   each member's uncompressed size against its declared shape, before it is
   read; arrays are read with ``allow_pickle=False``.
4. The fitted objects are rebuilt from those arrays and values: the trees
   (``TreePredictor``), the bin mapper, the loss from ``loss`` and the
   classes, the encoder of categorical features from the recorded
   categories, the random generators from their recorded states.
5. The rebuilt model is checked as before (trees are trees, indices in
   range, leaf values finite, ``_model_checks``), and the sum of the leaf
   values along any path of the trees must be finite.

Format 1 files (skops archives, eraboost up to this change) are not loaded:
:func:`convert_model` reads one with the old loader (skops and its type
allowlist) and writes it again in format 2, keeping only the declared
fields.

Pickling still works as for any scikit-learn estimator (``pickle``,
``joblib``), but loading a pickle runs code: load pickles only from sources
you trust.

The package, by role: the value codec (``_values``), the zip container
(``_container``), the reading of typed fields (``_fields``), the trees and
the bin mapper (``_trees``), one schema per kind of estimator
(``_booster``, ``_forest``, ``_robust``, ``_ensemble``), the registry of kinds
(``_registry``), the files as a whole (``_files``: save and load), the
bounds (``_limits``) and format 1 conversion (``_legacy``).
"""

from ._errors import ModelFileError, ModelVersionWarning
from ._files import MODEL_FORMAT, MODEL_VERSION, load_model, save_model
from ._legacy import LEGACY_TYPES, TRUSTED_TYPES, convert_model
from ._limits import MAX_JSON_BYTES

__all__ = [
    "LEGACY_TYPES",
    "MAX_JSON_BYTES",
    "MODEL_FORMAT",
    "MODEL_VERSION",
    "TRUSTED_TYPES",
    "ModelFileError",
    "ModelVersionWarning",
    "convert_model",
    "load_model",
    "save_model",
]
