"""Tier 2, `specialize-conjugacy`: where every particle's symbolic state has one structure, the
runtime's symbolic engine runs here at compile time on that structure (staged_symbolic.py,
staged_inference.py), and @main becomes arithmetic on numbers that the `pf` lowering compiles
(docs/tier2.md). The pass module is specialize_conjugacy.py; the specializer's parts are the
modules it names."""
