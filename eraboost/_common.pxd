# Shared C types of the engine.
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t

ctypedef float G_t          # gradients and hessians, as scikit-learn (float32)
ctypedef double Y_t         # sums, values, raw predictions
ctypedef uint8_t BIN_t      # binned feature values

# One histogram cell: the sums of the rows of one era falling in one bin.
cdef packed struct hist_t:
    double g
    double h
    uint32_t n

# One node of a fitted tree, as stored by the predictor.
cdef packed struct node_t:
    double value
    uint32_t count
    int32_t feature
    double threshold        # raw-value threshold: left iff x <= threshold
    uint8_t missing_left
    uint32_t left
    uint32_t right
    double gain
    uint32_t depth
    uint8_t is_leaf
    uint8_t bin_threshold   # binned threshold: left iff bin <= bin_threshold
