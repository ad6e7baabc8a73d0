# The per-era scoring of a scan's candidates (_scan_eras.pyx), called by
# the scan (_splitting.pyx) once per scan of a feature.
from ._scan cimport scan_t, split_t, node_sums_t, feature_scratch_t
from ._scorer cimport criterion_t


cdef bint score_per_era(const criterion_t *crit, const scan_t *s,
                        feature_scratch_t *fs, const node_sums_t *node,
                        int K, split_t *best) noexcept nogil
cdef bint score_per_era_sparse(const criterion_t *crit, const scan_t *s,
                               feature_scratch_t *fs,
                               const node_sums_t *node, int K,
                               split_t *best) noexcept nogil
