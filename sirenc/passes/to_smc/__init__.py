"""`lower-siren-to-smc`: the `siren` program becomes one particle's `smc.particle`, every value a
tuple of machine scalars, loops `scf.while` over list handles, draws and observations `smc` ops.
The pass module is lower_siren_to_smc.py."""
