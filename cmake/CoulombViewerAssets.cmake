# The browser side of replay.html and report.html (tools/viewer): three.js, OrbitControls and
# uPlot from the npm registry, installed into tools/viewer/node_modules by scripts/install-deps.sh
# (`npm ci`), bundled with the project's viewer code by esbuild (tools/viewer/build.mjs) into a
# generated C++ source file that the coulomb library compiles. Sets COULOMB_VIEWER_ASSETS_SOURCE.
# Needs node at build time; fails at configure time, naming the fix, when the npm packages are
# missing.
set(COULOMB_VIEWER_DIR ${PROJECT_SOURCE_DIR}/tools/viewer)
find_program(NODE_EXECUTABLE NAMES node nodejs)
if(NOT NODE_EXECUTABLE)
  message(FATAL_ERROR "node (Node.js) not found: it bundles the replay viewer at build time. "
                      "Run `bash scripts/install-deps.sh` (installs nodejs and the npm packages).")
endif()
foreach(_pkg three uplot esbuild)
  if(NOT EXISTS ${COULOMB_VIEWER_DIR}/node_modules/${_pkg}/package.json)
    message(FATAL_ERROR "${COULOMB_VIEWER_DIR}/node_modules/${_pkg} is missing: run `bash scripts/install-deps.sh` "
                        "(or `npm ci` in tools/viewer) to install the replay viewer's npm packages.")
  endif()
endforeach()

set(COULOMB_VIEWER_ASSETS_SOURCE ${CMAKE_CURRENT_BINARY_DIR}/viewer_assets.cc)
add_custom_command(
  OUTPUT ${COULOMB_VIEWER_ASSETS_SOURCE}
  COMMAND ${NODE_EXECUTABLE} ${COULOMB_VIEWER_DIR}/build.mjs --out ${COULOMB_VIEWER_ASSETS_SOURCE}
  DEPENDS ${COULOMB_VIEWER_DIR}/build.mjs
          ${COULOMB_VIEWER_DIR}/src/replay.js ${COULOMB_VIEWER_DIR}/src/replay.html
          ${COULOMB_VIEWER_DIR}/src/report.js ${COULOMB_VIEWER_DIR}/src/report.html
          ${COULOMB_VIEWER_DIR}/package-lock.json
          ${COULOMB_VIEWER_DIR}/node_modules/three/package.json
          ${COULOMB_VIEWER_DIR}/node_modules/uplot/package.json
  WORKING_DIRECTORY ${COULOMB_VIEWER_DIR}
  COMMENT "Bundling the replay/report viewer (three.js, uPlot) into viewer_assets.cc"
  VERBATIM)
