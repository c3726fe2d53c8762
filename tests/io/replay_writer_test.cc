// replay.html encoding (src/io/replay_writer.cc): the number encodings round-trip within their
// quanta, frames are subsampled to at most 60 per simulated second, and the data embedded in the
// page decodes (as tools/viewer/src/replay.js decodes it) back to the recorded poses, contacts
// and impulses. The browser side is tested by tests/browser/replay_test.mjs.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coulomb/io/replay_writer.h"
#include "coulomb/io/scene_loader.h"

namespace coulomb::io {
namespace {

namespace enc = replay_encoding;
using Json = nlohmann::json;

TEST(ReplayEncoding, PositionRoundTripWithinHalfAQuantum) {
  for (double x : {0.0, 1e-5, -0.123456789, 3.14159265, -1000.00004, 12345.6789, 0.00005, -0.00015}) {
    const double back = enc::dequantize_position(enc::quantize_position(x));
    EXPECT_LE(std::abs(back - x), 0.5 * enc::kPositionQuantum + 1e-12) << x;
  }
  EXPECT_EQ(enc::quantize_position(0.1), 1000);
  EXPECT_EQ(enc::quantize_position(-0.00026), -3);
  EXPECT_THROW(enc::quantize_position(1e6), std::out_of_range);
  EXPECT_THROW(enc::quantize_position(std::nan("")), std::out_of_range);
  EXPECT_THROW(enc::quantize_position(INFINITY), std::out_of_range);
}

TEST(ReplayEncoding, QuaternionRoundTripWithin1e4Radians) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (int i = 0; i < 1000; ++i) {
    Eigen::Vector4d q(normal(rng), normal(rng), normal(rng), normal(rng));
    q.normalize();
    const Eigen::Vector4d back = enc::dequantize_quaternion(enc::quantize_quaternion(q));
    EXPECT_NEAR(back.norm(), 1.0, 1e-12);
    const double angle = 2.0 * std::acos(std::min(1.0, std::abs(back.dot(q))));
    EXPECT_LT(angle, 1e-4) << q.transpose();
  }
  // Not normalized on input: normalized first.
  const auto q = enc::quantize_quaternion(Eigen::Vector4d(2.0, 0.0, 0.0, 0.0));
  EXPECT_EQ(q[0], 32767);
  EXPECT_EQ(q[1], 0);
  EXPECT_THROW(enc::quantize_quaternion(Eigen::Vector4d::Zero()), std::invalid_argument);
  EXPECT_THROW(enc::quantize_quaternion(Eigen::Vector4d(NAN, 0, 0, 1)), std::invalid_argument);
}

TEST(ReplayEncoding, Base64MatchesRfc4648AndRoundTrips) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    const std::vector<std::uint8_t> bytes(plain, plain + std::strlen(plain));
    EXPECT_EQ(enc::base64_encode(bytes), coded);
    EXPECT_EQ(enc::base64_decode(coded), bytes);
  }
  std::mt19937 rng(3);
  for (std::size_t n : {1u, 2u, 3u, 254u, 1000u}) {
    std::vector<std::uint8_t> bytes(n);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    EXPECT_EQ(enc::base64_decode(enc::base64_encode(bytes)), bytes);
  }
  EXPECT_THROW(enc::base64_decode("abc"), std::invalid_argument);
  EXPECT_THROW(enc::base64_decode("ab!d"), std::invalid_argument);
  EXPECT_THROW(enc::base64_decode("a=bc"), std::invalid_argument);
}

TEST(ReplayEncoding, DeflateRoundTripsAndCompressesRepetition) {
  std::vector<std::uint8_t> repetitive(100000);
  for (std::size_t i = 0; i < repetitive.size(); ++i) repetitive[i] = static_cast<std::uint8_t>(i % 7 == 0 ? 1 : 0);
  const std::vector<std::uint8_t> packed = enc::deflate(repetitive);
  EXPECT_LT(packed.size(), repetitive.size() / 50);
  EXPECT_EQ(enc::inflate(packed), repetitive);
  std::vector<std::uint8_t> noise(5000);
  std::mt19937 rng(11);
  for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
  EXPECT_EQ(enc::inflate(enc::deflate(noise)), noise);
  EXPECT_EQ(enc::inflate(enc::deflate({})), std::vector<std::uint8_t>{});
  std::vector<std::uint8_t> corrupt = enc::deflate(noise);
  corrupt.resize(corrupt.size() / 2);
  EXPECT_THROW(enc::inflate(corrupt), std::runtime_error);
}

// Two free bodies (a sphere and a capsule + box) and a fixed ground.
Scene test_scene() {
  return parse_scene(R"(
time_step: 0.001
duration: 1.0
bodies:
  - name: ground
    fixed: true
    shapes: [{type: box, size: [2, 2, 0.1], position: [0, 0, -0.05]}]
    color: [0.5, 0.6, 0.5, 1]
  - name: ball
    mass: 1.0
    shapes: [{type: sphere, radius: 0.05}]
    position: [0.1, 0.2, 0.3]
    color: [0.8, 0.3, 0.2, 1]
  - name: stick
    mass: 2.0
    shapes:
      - {type: capsule, radius: 0.02, length: 0.3, rpy: [1.5707963267948966, 0, 0]}
      - {type: box, size: [0.1, 0.05, 0.02], position: [0, 0, 0.1]}
    position: [-0.4, 0.0, 0.5]
)",
                     "<replay test scene>");
}

/// Frame data of a replay.html page, decoded as tools/viewer/src/replay.js does.
struct Decoded {
  Json meta;
  std::vector<double> times;
  std::vector<std::vector<std::array<double, 3>>> positions;    // [frame][body]
  std::vector<std::vector<std::array<double, 4>>> quaternions;  // [frame][body] (w, x, y, z)
  std::vector<int> contact_counts;
  std::vector<std::array<double, 3>> points;
  std::vector<std::array<double, 6>> impulses;
};

template <typename T>
std::vector<T> read_section(const std::vector<std::uint8_t>& bytes, const Json& layout, const char* name) {
  const std::size_t offset = layout[name][0], count = layout[name][1];
  EXPECT_LE(offset + count * sizeof(T), bytes.size()) << name;
  std::vector<T> out(count);
  std::memcpy(out.data(), bytes.data() + offset, count * sizeof(T));  // little-endian host
  return out;
}

Decoded decode(const std::string& html) {
  const std::string open = R"(<script type="application/json" id="coulomb-replay-data">)";
  const std::size_t begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  const std::size_t end = html.find("</script>", begin);
  Decoded d;
  d.meta = Json::parse(html.substr(begin + open.size(), end - begin - open.size()));
  EXPECT_EQ(d.meta["format"], "coulomb-replay");
  const std::vector<std::uint8_t> bytes = enc::inflate(enc::base64_decode(d.meta["data"].get<std::string>()));
  const Json& layout = d.meta["layout"];
  const int F = d.meta["num_frames"], B = static_cast<int>(d.meta["bodies"].size()), C = d.meta["num_contacts"];
  const double pq = d.meta["position_quantum"], qs = d.meta["quaternion_scale"], iq = d.meta["impulse_quantum"];
  d.times = read_section<double>(bytes, layout, "times");
  const auto pos = read_section<std::int32_t>(bytes, layout, "positions");
  const auto quat = read_section<std::int16_t>(bytes, layout, "quaternions");
  d.positions.assign(F, std::vector<std::array<double, 3>>(B));
  d.quaternions.assign(F, std::vector<std::array<double, 4>>(B));
  for (int b = 0; b < B; ++b) {
    for (int c = 0; c < 3; ++c) {
      std::uint32_t acc = 0;
      for (int f = 0; f < F; ++f) {
        acc += static_cast<std::uint32_t>(pos[(b * 3 + c) * F + f]);
        d.positions[f][b][c] = static_cast<std::int32_t>(acc) * pq;
      }
    }
    for (int c = 0; c < 4; ++c) {
      std::uint16_t acc = 0;
      for (int f = 0; f < F; ++f) {
        acc = static_cast<std::uint16_t>(acc + static_cast<std::uint16_t>(quat[(b * 4 + c) * F + f]));
        d.quaternions[f][b][c] = static_cast<std::int16_t>(acc) / qs;
      }
    }
  }
  d.contact_counts = read_section<std::int32_t>(bytes, layout, "contact_counts");
  const auto points = read_section<std::int32_t>(bytes, layout, "contact_points");
  const auto impulses = read_section<std::int16_t>(bytes, layout, "contact_impulses");
  d.points.resize(C);
  d.impulses.resize(C);
  for (int c = 0; c < 3; ++c) {
    std::uint32_t acc = 0;
    for (int k = 0; k < C; ++k) {
      acc += static_cast<std::uint32_t>(points[c * C + k]);
      d.points[k][c] = static_cast<std::int32_t>(acc) * pq;
    }
  }
  for (int c = 0; c < 6; ++c)
    for (int k = 0; k < C; ++k) d.impulses[k][c] = impulses[c * C + k] * iq;
  return d;
}

// q of the test scene with the free bodies moved along a path at time t (free-body q: position,
// then the quaternion (w, x, y, z)).
Eigen::VectorXd pose_at(const Scene& scene, double t) {
  Eigen::VectorXd q = scene.q0;
  for (int tree = 0; tree < 2; ++tree) {
    const int i = 7 * tree;
    q[i + 0] += 0.5 * std::sin(3.0 * t + tree);
    q[i + 1] -= 0.2 * t;
    q[i + 2] += -1.0 * t * t + 1000.0 * tree;  // far from the origin: 1 km
    const Eigen::Quaterniond r(Eigen::AngleAxisd(4.0 * t + tree, Eigen::Vector3d(1, 2, 3).normalized()));
    q.segment<4>(i + 3) << r.w(), r.x(), r.y(), r.z();
  }
  return q;
}

TEST(ReplayRecorder, KeepsAtMostOneFramePerSixtiethOfASecond) {
  const Scene scene = test_scene();
  for (double dt : {0.001, 0.005, 1.0 / 240.0, 0.01, 0.05}) {
    ReplayRecorder replay(scene.model, scene.geometries);
    const int steps = static_cast<int>(std::lround(2.0 / dt));
    int kept = 0;
    for (int k = 0; k <= steps; ++k)
      kept += replay.record(k * dt, pose_at(scene, k * dt), contact::ContactSet{}, Eigen::VectorXd(), k == steps);
    EXPECT_EQ(kept, replay.num_frames());
    const std::vector<double>& t = replay.frame_times();
    ASSERT_GE(t.size(), 2u);
    EXPECT_EQ(t.front(), 0.0);
    EXPECT_NEAR(t.back(), 2.0, 1e-9) << "the forced last step is a frame";
    if (dt < 1.0 / 60.0) {
      EXPECT_LE(replay.num_frames(), 60 * 2 + 2) << "dt " << dt;
      EXPECT_GE(replay.num_frames(), 60 * 2) << "dt " << dt;
    } else {
      EXPECT_EQ(replay.num_frames(), steps + 1) << "every step of a coarse run is kept, dt " << dt;
    }
    // No 1/60 s interval holds two frames (but the forced last one).
    for (std::size_t i = 1; i + 1 < t.size(); ++i)
      EXPECT_GT(std::floor(t[i] * 60.0 + 1e-6), std::floor(t[i - 1] * 60.0 + 1e-6)) << "dt " << dt << " frame " << i;
  }
}

TEST(ReplayRecorder, RespectsTheFrameRateOption) {
  const Scene scene = test_scene();
  ReplayOptions options;
  options.max_frame_rate = 10.0;
  ReplayRecorder replay(scene.model, scene.geometries, options);
  for (int k = 0; k <= 1000; ++k) replay.record(k * 1e-3, scene.q0, contact::ContactSet{}, Eigen::VectorXd());
  EXPECT_EQ(replay.num_frames(), 11);
  options.max_frame_rate = 0.0;
  EXPECT_THROW(ReplayRecorder(scene.model, scene.geometries, options), std::invalid_argument);
}

TEST(ReplayRecorder, PageDataDecodesToTheRecordedPosesContactsAndImpulses) {
  const Scene scene = test_scene();
  ReplayOptions options;
  options.title = "replay <test> </script>";
  options.time_step = 0.004;
  ReplayRecorder replay(scene.model, scene.geometries, options);
  ASSERT_EQ(replay.num_bodies(), 2);

  // Contacts: two on the ball, with frames from contact::contact_frame.
  contact::ContactSet contacts;
  contacts.contacts.resize(2);
  contacts.contacts[0].p_W = math::Vector3(0.1, 0.2, 0.0);
  contacts.contacts[0].R_WC = contact::contact_frame(math::Vector3(0, 0, 1));
  contacts.contacts[1].p_W = math::Vector3(-0.41234, 0.00006, 12.5);
  contacts.contacts[1].R_WC = contact::contact_frame(math::Vector3(1, 1, 1).normalized());
  Eigen::VectorXd impulses(6);
  impulses << 0.01, -0.02, 0.5, 0.0, 0.0, 2.0;

  std::vector<Eigen::VectorXd> kept_q;
  std::vector<double> kept_t;
  const double dt = 0.004;
  for (int k = 0; k <= 250; ++k) {
    const double t = k * dt;
    const Eigen::VectorXd q = pose_at(scene, t);
    const bool with_contacts = k % 2 == 1;
    if (replay.record(t, q, with_contacts ? contacts : contact::ContactSet{},
                      with_contacts ? impulses : Eigen::VectorXd(), k == 250)) {
      kept_q.push_back(q);
      kept_t.push_back(t);
    }
  }
  const std::string html = replay.html();
  EXPECT_EQ(html.find("<test> </script>"), std::string::npos) << "the title must not end the data element";
  const Decoded d = decode(html);
  EXPECT_EQ(d.meta["title"], options.title);
  ASSERT_EQ(d.times.size(), kept_t.size());
  ASSERT_EQ(d.meta["bodies"].size(), 2u);
  EXPECT_EQ(d.meta["bodies"][0]["name"], "ball");
  EXPECT_EQ(d.meta["bodies"][1]["name"], "stick");
  EXPECT_EQ(d.meta["bodies"][0]["geometries"][0]["type"], "sphere");
  EXPECT_EQ(d.meta["bodies"][0]["geometries"][0]["radius"], 0.05);
  EXPECT_EQ(d.meta["bodies"][1]["geometries"][0]["type"], "capsule");
  EXPECT_EQ(d.meta["bodies"][1]["geometries"][1]["type"], "box");
  EXPECT_EQ(d.meta["static_geometries"].size(), 1u);
  EXPECT_EQ(d.meta["static_geometries"][0]["rgba"][1], 0.6);

  int total_contacts = 0;
  for (std::size_t f = 0; f < kept_t.size(); ++f) {
    EXPECT_EQ(d.times[f], kept_t[f]);
    for (int b = 0; b < 2; ++b) {
      const Eigen::VectorXd& q = kept_q[f];
      for (int c = 0; c < 3; ++c)
        EXPECT_NEAR(d.positions[f][b][c], q[7 * b + c], 0.5e-4 + 1e-9) << "frame " << f << " body " << b;
      const Eigen::Vector4d want = q.segment<4>(7 * b + 3);
      const Eigen::Vector4d got(d.quaternions[f][b][0], d.quaternions[f][b][1], d.quaternions[f][b][2],
                                d.quaternions[f][b][3]);
      EXPECT_LT(2.0 * std::acos(std::min(1.0, std::abs(got.normalized().dot(want)))), 1e-4) << "frame " << f;
      if (f > 0) {  // hemisphere-continuous: neighbours have a positive dot product
        const Eigen::Vector4d prev(d.quaternions[f - 1][b][0], d.quaternions[f - 1][b][1], d.quaternions[f - 1][b][2],
                                   d.quaternions[f - 1][b][3]);
        EXPECT_GT(prev.dot(got), 0.0);
      }
    }
    const int n = d.contact_counts[f];
    EXPECT_EQ(n, std::lround(kept_t[f] / dt) % 2 == 1 ? 2 : 0) << "frame " << f;
    for (int i = 0; i < n; ++i) {
      const contact::Contact& c = contacts.contacts[i];
      const std::array<double, 3>& p = d.points[total_contacts + i];
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[k], c.p_W[k], 0.5e-4 + 1e-9);
      const Eigen::Vector3d gamma = impulses.segment<3>(3 * i);
      const Eigen::Vector3d normal = c.R_WC.col(2) * gamma[2];
      const Eigen::Vector3d friction = c.R_WC.col(0) * gamma[0] + c.R_WC.col(1) * gamma[1];
      const double iq = d.meta["impulse_quantum"];
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(d.impulses[total_contacts + i][k], normal[k], 0.5 * iq + 1e-7);
        EXPECT_NEAR(d.impulses[total_contacts + i][3 + k], friction[k], 0.5 * iq + 1e-7);
      }
    }
    total_contacts += n;
  }
  EXPECT_EQ(total_contacts, d.meta["num_contacts"]);
  EXPECT_GT(total_contacts, 0);
}

TEST(ReplayRecorder, RejectsBadInput) {
  const Scene scene = test_scene();
  ReplayRecorder replay(scene.model, scene.geometries);
  EXPECT_THROW(replay.record(0.0, Eigen::VectorXd::Zero(3), contact::ContactSet{}, Eigen::VectorXd()),
               std::invalid_argument);
  contact::ContactSet one;
  one.contacts.resize(1);
  EXPECT_THROW(replay.record(0.0, scene.q0, one, Eigen::VectorXd::Zero(2)), std::invalid_argument);
  EXPECT_TRUE(replay.record(0.5, scene.q0, contact::ContactSet{}, Eigen::VectorXd()));
  EXPECT_THROW(replay.record(0.4, scene.q0, contact::ContactSet{}, Eigen::VectorXd()), std::invalid_argument);
  std::vector<geometry::Geometry> bad = scene.geometries;
  bad[0].body = 99;
  EXPECT_THROW(ReplayRecorder(scene.model, bad), std::invalid_argument);
}

}  // namespace
}  // namespace coulomb::io
