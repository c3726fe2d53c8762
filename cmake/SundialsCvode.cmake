# SUNDIALS CVODE (Debian: libsundials-dev, listed in scripts/install-deps.sh), the BDF reference
# of the L-stable solver's elastic-foundation experiment (tests/oracle/elastic_foundation.h):
# needed by coulomb_oracle_tests and coulomb_elastic_foundation. Defines the imported target
# coulomb::sundials_cvode. Fails configuration, never skips, when a piece is missing.
if(NOT TARGET coulomb::sundials_cvode)
  find_path(SUNDIALS_CVODE_INCLUDE_DIR cvode/cvode.h)
  if(NOT SUNDIALS_CVODE_INCLUDE_DIR)
    message(FATAL_ERROR "SUNDIALS CVODE header cvode/cvode.h not found: install libsundials-dev "
                        "(bash scripts/install-deps.sh)")
  endif()
  set(_coulomb_sundials_libs)
  foreach(_lib sundials_cvode sundials_nvecserial sundials_sunmatrixdense sundials_sunlinsoldense)
    find_library(SUNDIALS_${_lib}_LIBRARY NAMES ${_lib})
    if(NOT SUNDIALS_${_lib}_LIBRARY)
      message(FATAL_ERROR "SUNDIALS library ${_lib} not found: install libsundials-dev "
                          "(bash scripts/install-deps.sh)")
    endif()
    list(APPEND _coulomb_sundials_libs ${SUNDIALS_${_lib}_LIBRARY})
  endforeach()
  add_library(coulomb::sundials_cvode INTERFACE IMPORTED GLOBAL)
  target_include_directories(coulomb::sundials_cvode INTERFACE ${SUNDIALS_CVODE_INCLUDE_DIR})
  target_link_libraries(coulomb::sundials_cvode INTERFACE ${_coulomb_sundials_libs})
  message(STATUS "SUNDIALS CVODE: ${SUNDIALS_CVODE_INCLUDE_DIR}; ${_coulomb_sundials_libs}")
endif()
