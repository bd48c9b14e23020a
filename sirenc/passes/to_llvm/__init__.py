"""`lower-smc-to-llvm`: one particle's `smc` program becomes ``llvm.func @siren_resume`` over the C
runtime, the only place that names its functions, byte offsets and pointers. The pass module is
lower_smc_to_llvm.py: step 0 (row_elements.py), step 1 (the patterns) and step 2 (control_flow.py,
resume_graph.py). Before it, `store-result-views` (result_views.py) stores a result's trajectories
returned reversed as they were built, for the runtime to read reversed."""
