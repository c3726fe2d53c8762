# ctest fidelity_quick (label fidelity): runs `coulomb_fidelity --quick` and passes when it exits 0
# and prints a Markdown table (its header row and at least one result row). It checks no
# tolerance. Usage: cmake -DFIDELITY=path/to/coulomb_fidelity -P fidelity_test.cmake
execute_process(COMMAND ${FIDELITY} --quick RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
message("${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "coulomb_fidelity --quick exited with ${rc}")
endif()
if(NOT out MATCHES "\\| case \\| approximation \\| integrator \\| quantity \\| expected \\| measured \\| error \\| solver \\|")
  message(FATAL_ERROR "coulomb_fidelity --quick printed no result table")
endif()
if(NOT out MATCHES "\n\\| [a-z0-9_]+ \\| [^|]+ \\| (implicit-euler|symplectic-euler|midpoint) \\| ")
  message(FATAL_ERROR "coulomb_fidelity --quick printed a table without result rows")
endif()
