// coulomb_elastic_foundation: the L-stable paper's Tables 1 and 2 (Drumwright §5.5; digest
// ../shared/digests/lstable.md §5.4) for this library: a 1 m, 8 kg cube on a Winkler
// foundation of 100 or 900 frictionless unilateral spring–damper elements (E = 1e7 or 1e11,
// B = 1 per element), an extra 5 N or 50 N load circling on its top face, 1 s.
//
// For every case it prints the CPU time of lstable (h = 0.01, one LStableSolver::solve per
// step) and of SUNDIALS CVODE BDF on the same penalty ODE (tests/oracle/elastic_foundation.h),
// at a tight reference tolerance, at a loose "engineering" tolerance (rtol 1e-6, orders 1–5) and
// as the analog of the paper's "ode15s forced to first order" (BDF order 1, MATLAB's default
// tolerances rtol 1e-3, atol 1e-6), and lstable's
// generalized-coordinate error after 1 s against the tight CVODE run (the paper's Table 2
// measure). Markdown on stdout (docs/lstable-experiments.md).
//
//   coulomb_elastic_foundation [--elements 100,900] [--loads 5,50] [--E 1e7,1e11] [--h 0.01]
//                              [--fine-h 0.001] [--fine-max-elements 100]
//                              [--rtol 1e-12] [--check-rtol 1e-10] [--loose-rtol 1e-6]
//
// --check-rtol: a second, looser CVODE run (absolute tolerances ×100); its distance to the
// reference ("ref. check") bounds the looser run's error, so the reference's own error is
// presumably well below it. 0 skips it. --fine-h: lstable's error at that step as well, for the
// cases with at most --fine-max-elements elements (the paper's h = 1e-3 row); 0 skips it.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "elastic_foundation.h"

namespace {

using namespace coulomb::testing::foundation;

std::vector<double> parse_list(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const double value = std::strtod(item.c_str(), &end);
    if (item.empty() || end == nullptr || *end != '\0')
      throw std::invalid_argument(flag + ": '" + item + "' is not a number");
    out.push_back(value);
  }
  if (out.empty()) throw std::invalid_argument(flag + ": empty list");
  return out;
}

struct Row {
  int elements = 0;
  double load = 0.0, E = 0.0;
  LStableRun lstable;
  CvodeRun reference, loose, bdf1;
  double error = 0.0, relative_error = 0.0, loose_error = 0.0, bdf1_error = 0.0, reference_error = -1.0, fine_error = -1.0;
  int lifted = 0, lifted_reference = 0;
  double sink = 0.0, sink_reference = 0.0;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<double> elements = {100, 900}, loads = {5, 50}, moduli = {1e7, 1e11};
    double h = 0.01, rtol = 1e-12, loose_rtol = 1e-6, check_rtol = 1e-10, fine_h = 0.001, fine_max_elements = 100;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--elements") elements = parse_list(next(), a);
      else if (a == "--loads") loads = parse_list(next(), a);
      else if (a == "--E") moduli = parse_list(next(), a);
      else if (a == "--h") h = parse_list(next(), a).at(0);
      else if (a == "--rtol") rtol = parse_list(next(), a).at(0);
      else if (a == "--loose-rtol") loose_rtol = parse_list(next(), a).at(0);
      else if (a == "--check-rtol") check_rtol = parse_list(next(), a).at(0);
      else if (a == "--fine-h") fine_h = parse_list(next(), a).at(0);
      else if (a == "--fine-max-elements") fine_max_elements = parse_list(next(), a).at(0);
      else throw std::invalid_argument("unknown argument '" + a + "'");
    }
    std::vector<Row> rows;
    for (double ne : elements) {
      const int n_side = static_cast<int>(std::lround(std::sqrt(ne)));
      if (n_side * n_side != static_cast<int>(ne))
        throw std::invalid_argument("--elements: " + std::to_string(ne) + " is not a square number");
      for (double load : loads)
        for (double E : moduli) {
          FoundationSetup s;
          s.n_side = n_side;
          s.E = E;
          s.load = load;
          s.h = h;
          Row r;
          r.elements = n_side * n_side;
          r.load = load;
          r.E = E;
          r.lstable = run_lstable(s);
          CvodeOptions tight;  // defaults: atol 1e-16 (p, q), 1e-12 (ω, v)
          tight.rtol = rtol;
          r.reference = run_cvode(s, tight);
          CvodeOptions loose;
          loose.rtol = loose_rtol;
          loose.atol_position = 1e-12;
          loose.atol_velocity = 1e-8;
          r.loose = run_cvode(s, loose);
          CvodeOptions bdf1;
          bdf1.rtol = 1e-3;
          bdf1.atol_position = bdf1.atol_velocity = 1e-6;
          bdf1.max_order = 1;
          r.bdf1 = run_cvode(s, bdf1);
          r.error = coordinate_error(r.lstable.final_state, r.reference.final_state);
          r.relative_error = r.error / coordinate_norm(r.reference.final_state);
          r.loose_error = coordinate_error(r.loose.final_state, r.reference.final_state);
          r.bdf1_error = coordinate_error(r.bdf1.final_state, r.reference.final_state);
          if (check_rtol > 0.0) {
            CvodeOptions check = tight;
            check.rtol = check_rtol;
            check.atol_position = tight.atol_position * 1e2;
            check.atol_velocity = tight.atol_velocity * 1e2;
            r.reference_error = coordinate_error(run_cvode(s, check).final_state, r.reference.final_state);
          }
          if (fine_h > 0.0 && r.elements <= fine_max_elements) {
            FoundationSetup fine = s;
            fine.h = fine_h;
            r.fine_error = coordinate_error(run_lstable(fine).final_state, r.reference.final_state);
          }
          r.lifted = lifted_elements(s, r.lstable.final_state);
          r.lifted_reference = lifted_elements(s, r.reference.final_state);
          r.sink = mean_sink(s, r.lstable.final_state);
          r.sink_reference = mean_sink(s, r.reference.final_state);
          std::fprintf(stderr,
                       "n=%d P=%g E=%g: lstable %.3f s (%d calls, %ld QP it, %d failures, %d lifted), "
                       "CVODE %.3f s (%ld steps, %d lifted), loose %.3f s, err %.3g, ref check %.2g, fine %.3g\n",
                       r.elements, load, E, r.lstable.seconds, r.lstable.solver_calls, r.lstable.qp_iterations,
                       r.lstable.failures, r.lifted, r.reference.seconds, r.reference.steps, r.lifted_reference,
                       r.loose.seconds, r.error, r.reference_error, r.fine_error);
          std::fprintf(stderr, "    BDF1 %.3f s (%ld steps), err %.3g\n", r.bdf1.seconds, r.bdf1.steps, r.bdf1_error);
          rows.push_back(r);
        }
    }
    std::printf("Table 1 analog: CPU time [s] for 1 s of simulated time (lstable h = %g; CVODE BDF "
                "rtol = %g (reference), %g (loose), and BDF1 at rtol 1e-3, atol 1e-6 (the paper's first-order "
                "ode15s)); steps in parentheses.\n\n",
                h, rtol, loose_rtol);
    std::printf("| elements | load [N] | E [N/m²] | lstable [s] | QP iterations | CVODE ref. [s] | CVODE loose [s] "
                "| CVODE BDF1 [s] |\n|---|---|---|---|---|---|---|---|\n");
    for (const Row& r : rows)
      std::printf("| %d | %g | %g | %.3f | %ld | %.3f (%ld) | %.3f (%ld) | %.3f (%ld) |\n", r.elements, r.load, r.E,
                  r.lstable.seconds, r.lstable.qp_iterations, r.reference.seconds, r.reference.steps, r.loose.seconds,
                  r.loose.steps, r.bdf1.seconds, r.bdf1.steps);
    std::printf("\nTable 2 analog: generalized-coordinate error after 1 s against CVODE (rtol = %g); "
                "\"ref. check\" = distance of that reference to a CVODE run at rtol = %g (— not run); \"h = %g\" = "
                "lstable's error at that step (— not run); lifted = elements above the foundation at t = 1 s "
                "(lstable / CVODE).\n\n",
                rtol, check_rtol, fine_h);
    std::printf("| load [N] | elements | E [N/m²] | lstable abs err | lstable rel err | lstable h = %g | CVODE loose err "
                "| CVODE BDF1 err | ref. check | sink lstable [m] | sink CVODE [m] | (mg+P)/(n k) [m] | lifted |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                fine_h);
    for (const Row& r : rows) {
      FoundationSetup s;
      s.n_side = static_cast<int>(std::lround(std::sqrt(r.elements)));
      s.E = r.E;
      const double closed = (s.mass * s.gravity + r.load) / (r.elements * s.element_stiffness());
      char fine[32] = "—";
      if (r.fine_error >= 0.0) std::snprintf(fine, sizeof fine, "%.3g", r.fine_error);
      char check[32] = "—";
      if (r.reference_error >= 0.0) std::snprintf(check, sizeof check, "%.2g", r.reference_error);
      std::printf("| %g | %d | %g | %.3g | %.3g | %s | %.3g | %.3g | %s | %.4g | %.4g | %.4g | %d / %d |\n", r.load,
                  r.elements, r.E, r.error, r.relative_error, fine, r.loose_error, r.bdf1_error, check, r.sink, r.sink_reference, closed, r.lifted,
                  r.lifted_reference);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "coulomb_elastic_foundation: %s\n", e.what());
    return 1;
  }
}
