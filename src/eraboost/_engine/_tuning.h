/* The tuned constants of the split scan and of the scorer, in one place,
   each with its reason (what was measured for them is in
   docs/performance-history.md). Read by C (_scan.h) and, through
   _scorer.pxd, by Cython. The splitter's thread thresholds are in
   _common.pxd. */
#ifndef ERABOOST_TUNING_H
#define ERABOOST_TUNING_H

/* Categories with a hessian sum below this many rows take no part in a
   categorical split, and it smooths their order: scikit-learn's constant
   (LightGBM's cat_smooth), for scikit-learn's splits. */
#define EB_MIN_CAT_SUPPORT 10.0

/* Pooled progress (docs/criteria.md): the share of the per-era children's
   score that an era criterion's pooled gain must exceed. Far above the
   rounding of the gain (about 1e-16 of that score), far below any split
   that changes the pooled values. */
#define EB_POOLED_PROGRESS_RTOL 1e-9

/* Candidates a block bound covers (docs/criteria.md, "A bound over a block
   of candidates"): a bound costs about a third of its block's gains, so a
   block must be long enough to pay for it and short enough to be skipped
   often. The gather of a block's sums asks for the next block's cells,
   as many steps ahead. */
#define EB_BOUND_BLOCK 8

/* After this many failed bounds in a row a thread tries one every
   2 ** EB_BOUND_MAX_MISSES blocks only: where bounds rarely skip (many
   small eras) they cost more than they save. */
#define EB_BOUND_MAX_MISSES 6

/* A bound's margin, relative to the bound plus the eras' scores: far above
   the rounding of the gains and their sum (about 1e-16 of those), far
   below the gaps between the candidates that it skips. */
#define EB_BOUND_RTOL 1e-10

/* Scans of at most this many steps (features of up to 9 bins, one block of
   EB_BOUND_BLOCK candidates) are scored by their gain sums alone
   (_scorer.pxd, sums_only): that pass reads a bin's eras from as many cache
   lines as there are bins, so beyond a few bins the scan candidate by
   candidate is faster. */
#define EB_GAIN_SUMS_MAX_STEPS 8

/* Four unit roundoffs (2 ** -53 each): the running sum's margin per
   change (_scorer.pxd, sum_below). */
#define EB_SUM_RTOL (4.0 * 1.1102230246251565e-16)

#endif  /* ERABOOST_TUNING_H */
