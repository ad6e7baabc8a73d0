"""The bounds that keep the cost of reading a model file bounded by its size."""

import math

import numpy as np

#: Largest ``model.json`` read (the metadata and feature names live there).
MAX_JSON_BYTES = 64 * 2**20
# nesting of JSON values, features, values of an array parameter, training rows
MAX_NESTING = 32
MAX_FEATURES = 2**24
MAX_PARAM_ARRAY = 10**6
MAX_SAMPLES = 2**40
# members larger than this may not compress more than MAX_RATIO to 1
# (arrays of a model hold varied values; a bomb of zeros compresses ~1000:1)
RATIO_FROM = 16 * 2**20
MAX_RATIO = 100
# the largest raw prediction a path of trees may sum to, and below which
# exp() of a log link stays finite
MAX_RAW = 1e300
MAX_LOG_RAW = math.log(np.finfo(np.float64).max)
