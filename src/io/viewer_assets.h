// The HTML, CSS and JavaScript (three.js, OrbitControls, uPlot and the project's viewer code)
// of replay.html and report.html, as a page split where its data goes. Private to the library:
// the definitions are generated at build time by tools/viewer/build.mjs into the build folder
// (cmake/CoulombViewerAssets.cmake), so the ~600 kB of script stay out of every header.
#pragma once

namespace coulomb::io::viewer_assets {

/// replay.html = kReplayHtmlBefore + JSON data (format "coulomb-replay") + kReplayHtmlAfter.
extern const char kReplayHtmlBefore[];
extern const char kReplayHtmlAfter[];
/// report.html = kReportHtmlBefore + JSON data (format "coulomb-report") + kReportHtmlAfter.
extern const char kReportHtmlBefore[];
extern const char kReportHtmlAfter[];
/// "three X.Y.Z, uplot X.Y.Z": the npm packages inlined.
extern const char kLibraryVersions[];

}  // namespace coulomb::io::viewer_assets
