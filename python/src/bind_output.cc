// Writers: trajectory.csv (io::TrajectoryWriter), and a Recorder that writes the output folder of
// `coulomb simulate` (trajectory.csv, steps.csv, stats.json, replay.html, report.html) for a
// Simulator driven from Python, with the io writers as apps/coulomb/run_output.cc uses them.
#include <nanobind/eigen/dense.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "common.h"
#include "coulomb/io/replay_writer.h"
#include "coulomb/io/report_writer.h"
#include "coulomb/io/simulation_output.h"

namespace coulomb::python {

namespace fs = std::filesystem;
namespace sim = coulomb::simulation;

namespace {

// The output folder of one run. Holds its own copy of the scene (the writers keep references to
// it) and of the parameters it needs.
class Recorder {
 public:
  Recorder(sim::Simulator& s, const std::string& directory, bool html, const std::string& title)
      : scene_(std::make_unique<scene::Scene>(s.scene())),
        directory_(directory),
        time_step_(s.parameters().time_step),
        solver_(sim::to_string(s.parameters().solver)),
        integrator_(sim::to_string(s.parameters().integrator)),
        approximation_(contact::to_string(s.scene().contact.approximation)),
        title_(title.empty() ? s.scene().source : title) {
    fs::create_directories(directory_);
    for (const char* stale : {"stats.json", "report.html", "replay.html"}) fs::remove(fs::path(directory_) / stale);
    trajectory_.emplace(directory_ + "/trajectory.csv", *scene_);
    steps_.emplace(directory_ + "/steps.csv");
    stats_.friction_model = solvers::lstable::to_string(s.parameters().lstable.friction);
    stats_.energy_initial = s.energy(s.q(), s.v());
    stats_.energy_final = stats_.energy_initial;
    trajectory_->write(s.time(), s.q(), s.v());
    if (html) {
      io::ReplayOptions options;
      options.title = title_;
      options.time_step = time_step_;
      replay_.emplace(scene_->model, scene_->geometries, scene_->visuals, options);
      replay_->record(s.time(), s.q(), contact::ContactSet{}, Eigen::VectorXd(), true);
    }
  }

  void record(const sim::Simulator& s) {
    if (!trajectory_) throw std::runtime_error("Recorder: " + directory_ + " was already closed");
    const sim::StepStats& st = s.last_step();
    stats_.add(st);
    steps_->write(st);
    trajectory_->write(st.time, s.q(), s.v(), &s.last_results());
    if (replay_) replay_->record(st.time, s.q(), s.contacts(), s.contact_impulses(), false);
    last_time_ = st.time;
    last_q_ = s.q();
    warnings_ = s.warnings();
  }

  void close() {
    if (!trajectory_) return;
    trajectory_->close();
    trajectory_.reset();
    steps_->close();
    steps_.reset();
    stats_.warnings = scene_->warnings;
    stats_.warnings.insert(stats_.warnings.end(), warnings_.begin(), warnings_.end());
    stats_.notes = scene_->notes;
    if (replay_) {
      // The last state is always a frame.
      if (last_q_.size() > 0) replay_->record(last_time_, last_q_, contact::ContactSet{}, Eigen::VectorXd(), true);
      stats_.notes.insert(stats_.notes.end(), replay_->notes().begin(), replay_->notes().end());
    }
    io::write_stats_json(directory_ + "/stats.json", stats_, solver_, integrator_, time_step_, title_,
                         scene_->model.nv(), approximation_, scene_.get());
    if (replay_) {
      replay_->write(directory_ + "/replay.html");
      io::write_report(directory_);
    }
  }

  const std::string& directory() const { return directory_; }

 private:
  std::unique_ptr<scene::Scene> scene_;
  std::string directory_;
  double time_step_;
  std::string solver_, integrator_, approximation_, title_;
  std::optional<io::TrajectoryWriter> trajectory_;
  std::optional<io::StepsWriter> steps_;
  std::optional<io::ReplayRecorder> replay_;
  io::RunStatistics stats_;
  std::vector<std::string> warnings_;
  double last_time_ = 0.0;
  Eigen::VectorXd last_q_;
};

}  // namespace

void bind_output(nb::module_& m) {
  nb::class_<io::TrajectoryWriter>(m, "TrajectoryWriter",
                                   "trajectory.csv (docs/user-guide.md): t, every body's pose and velocity in the "
                                   "world frame, every 1-dof joint's q and v, actuator torques and contact forces.")
      .def(nb::init<const std::string&, const scene::Scene&>(), "path"_a, "scene"_a, nb::keep_alive<1, 3>(),
           "Opens `path` for the scene's columns (the writer keeps the scene alive).")
      .def(
          "write",
          [](io::TrajectoryWriter& w, double t, nb::handle q, nb::handle v) {
            w.write(t, to_vector(q, "q"), to_vector(v, "v"));
          },
          "t"_a, "q"_a, "v"_a, "Appends the row of time t [s] at (q, v) (zero torques and contact forces).")
      .def(
          "write_simulator",
          [](io::TrajectoryWriter& w, const sim::Simulator& s) { w.write(s.time(), s.q(), s.v(), &s.last_results()); },
          "simulator"_a, "Appends the simulator's current row, with the last step's torques and contact forces.")
      .def("close", &io::TrajectoryWriter::close)
      .def_static(
          "header", [](const scene::Scene& scene) { return io::TrajectoryWriter::header(scene); }, "scene"_a,
          "Column names.");

  nb::class_<Recorder>(m, "Recorder",
                       "Writes the output folder of `coulomb simulate` for a Simulator run from Python: "
                       "trajectory.csv, steps.csv, stats.json and (html=True) replay.html and report.html. Call "
                       "record() after every step and close() at the end (also a context manager).")
      .def(nb::init<sim::Simulator&, const std::string&, bool, const std::string&>(), "simulator"_a,
           "directory"_a, "html"_a = true, "title"_a = "",
           "Creates `directory` and writes the initial state's row.")
      .def("record", &Recorder::record, "simulator"_a, "Records the step the simulator just took.")
      .def("close", &Recorder::close, "Closes the CSV files, writes stats.json, replay.html and report.html.")
      .def_prop_ro("directory", &Recorder::directory)
      .def("__enter__", [](nb::handle self) { return self; })
      .def("__exit__", [](Recorder& r, nb::args) { r.close(); });

  m.def(
      "write_report", [](const std::string& directory) { return io::write_report(directory); }, "directory"_a,
      "Writes DIRECTORY/report.html from its steps.csv and stats.json; returns its size in bytes.");
}

}  // namespace coulomb::python
