"""`symbolic-values`, the stage every symbolic method runs: which values may be symbolic, retyped
`!siren.sym` with `siren.to_sym`/`siren.force` where concrete and symbolic meet. Tier 1 lowers
its output as it is; tier 2 (tier2/) stages it first."""
