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
# members of an ensemble
MAX_MEMBERS = 64
# members larger than this may not compress more than MAX_RATIO to 1
# (arrays of a model hold varied values; a bomb of zeros compresses ~1000:1)
RATIO_FROM = 16 * 2**20
MAX_RATIO = 100
# the largest raw prediction a path of trees may sum to, and the largest
# under a log link: exp() of it stays finite with a margin of e, whatever the
# order in which predict adds the trees
MAX_RAW = 1e300
MAX_LOG_RAW = math.log(np.finfo(np.float64).max) - 1.0
# values of the rows an encoder of categorical features is fitted again on
# (its categories' rows times the features)
MAX_ENCODER_CELLS = 2**22
# values (items, lists and objects) of model.json, counted before it is parsed
MAX_JSON_VALUES = 2**21
# the text arrays of model.json (labels, parameters) take at most this many
# bytes plus TEXT_BYTES_PER_JSON_BYTE per byte of model.json
TEXT_BYTES = 16 * 2**20
TEXT_BYTES_PER_JSON_BYTE = 4
