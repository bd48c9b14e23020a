"""Passes on the `smc` program about its suspension points (`smc.resample`, `smc.next_row`), where a
particle stops and is later re-entered: `hoist-above-resample` moves pure arithmetic above a
resample so that fewer values cross it, and `spill-across-suspends` keeps the values that do cross
one in frame slots. `lower-smc-to-llvm` relies on the second's contract."""
