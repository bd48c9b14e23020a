# Smoke test of the hand-written baseline: write a tiny observation file, run it, check the report.
file(WRITE "${DIR}/rw_smoke.csv" "y\n0.5\n1.0\n0.2\n-0.3\n")
execute_process(COMMAND "${EXE}" "${DIR}/rw_smoke.csv" 1000 1
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "ns_per_particle_step" OR NOT out MATCHES "mean")
  message(FATAL_ERROR "rw_bootstrap failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "${out}")
