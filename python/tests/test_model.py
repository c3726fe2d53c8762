"""Model and the rigid-body algorithms: consistency between them and with finite differences."""
import numpy as np
import pytest

import coulomb
from conftest import SHARED


@pytest.fixture(scope="module")
def a1():
    return coulomb.load_urdf(str(SHARED / "models" / "a1.urdf"), floating=True)


@pytest.fixture(scope="module")
def iiwa():
    return coulomb.load_urdf(str(SHARED / "models" / "kuka_iiwa_robot.urdf"))


def random_state(model, rng):
    q = model.neutral_configuration() + 0.3 * rng.standard_normal(model.nq)
    if model.position_names[3].endswith(".qw"):  # floating base: a unit quaternion
        q[3:7] /= np.linalg.norm(q[3:7])
    return q, rng.standard_normal(model.nv)


def test_model_sizes_and_names(a1):
    assert (a1.nq, a1.nv) == (19, 18)
    assert a1.nbodies == 14  # world, trunk, 12 leg bodies (hips, thighs, calves; feet welded)
    assert a1.dof_names[:6] == ["root_joint.wx", "root_joint.wy", "root_joint.wz",
                                "root_joint.vx", "root_joint.vy", "root_joint.vz"]
    assert "FR_calf_joint" in a1.joint_names
    assert "FR_foot" in a1.frame_names
    assert a1.body_names[0] == "world"
    assert a1.total_mass == pytest.approx(13.741, abs=1e-3)
    assert "nv=18" in repr(a1)


@pytest.mark.parametrize("name", ["a1", "iiwa"])
def test_mass_matrix_aba_rnea_consistency(name, request):
    model = request.getfixturevalue(name)
    rng = np.random.default_rng(7)
    ws = coulomb.Workspace(model)
    for _ in range(5):
        q, v = random_state(model, rng)
        tau = rng.standard_normal(model.nv)
        M = coulomb.crba(model, q, workspace=ws)
        b = coulomb.bias_forces(model, q, v)
        vdot = coulomb.aba(model, q, v, tau)
        assert M.shape == (model.nv, model.nv)
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert np.all(np.linalg.eigvalsh(M) > 0)
        np.testing.assert_allclose(M @ vdot + b, tau, rtol=1e-9, atol=1e-9)           # M·aba(τ) + b = τ
        np.testing.assert_allclose(coulomb.rnea(model, q, v, vdot), tau, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(coulomb.rnea(model, q, v, np.zeros(model.nv)), b, atol=1e-12)
        np.testing.assert_allclose(coulomb.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv)),
                                   coulomb.generalized_gravity(model, q), atol=1e-12)


def test_frame_jacobian_finite_differences(iiwa):
    rng = np.random.default_rng(3)
    q, v = random_state(iiwa, rng)
    frame = iiwa.frame_names[-1]
    J = coulomb.frame_jacobian(iiwa, q, frame)  # local_world_aligned: [ω; ṗ] in world axes
    assert J.shape == (6, iiwa.nv)
    h = 1e-6
    T_plus, T_minus = coulomb.frame_pose(iiwa, q + h * v, frame), coulomb.frame_pose(iiwa, q - h * v, frame)
    p_dot = (T_plus[:3, 3] - T_minus[:3, 3]) / (2 * h)
    R_dot = (T_plus[:3, :3] - T_minus[:3, :3]) / (2 * h)
    R = coulomb.frame_pose(iiwa, q, frame)[:3, :3]
    W = R_dot @ R.T  # [ω]×
    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
    np.testing.assert_allclose(J[3:] @ v, p_dot, atol=1e-7)
    np.testing.assert_allclose(J[:3] @ v, omega, atol=1e-7)
    # 'local' is the same twist in the frame's axes.
    J_local = coulomb.frame_jacobian(iiwa, q, iiwa.frame_index(frame), reference_frame="local")
    np.testing.assert_allclose(J_local[:3] @ v, R.T @ omega, atol=1e-7)
    np.testing.assert_allclose(J_local[3:] @ v, R.T @ p_dot, atol=1e-7)


def test_errors_name_the_value(a1, tmp_path):
    with pytest.raises(ValueError, match=r"q has 3 entries; model 'a1' has nq = 19"):
        coulomb.rnea(a1, np.zeros(3), np.zeros(18), np.zeros(18))
    q = a1.neutral_configuration()
    v = np.zeros(18)
    v[4] = np.nan
    with pytest.raises(ValueError, match=r"v\[4\] \(root_joint.vy\) is not finite"):
        coulomb.bias_forces(a1, q, v)
    with pytest.raises(IndexError, match="no_such_frame"):
        coulomb.frame_jacobian(a1, q, "no_such_frame")
    with pytest.raises(ValueError, match="reference_frame: unknown value 'body'"):
        coulomb.frame_jacobian(a1, q, "FR_foot", reference_frame="body")
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r">\n<link name="a">\n<inertial><mass value="-1.5"/>'
                   '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>\n</link>\n</robot>\n')
    with pytest.raises(coulomb.UrdfError, match=r"bad\.urdf.*-1\.5") as info:
        coulomb.load_urdf(str(bad))
    assert isinstance(info.value, ValueError)
    with pytest.raises(coulomb.UrdfError, match="missing.urdf"):
        coulomb.load_urdf(str(tmp_path / "missing.urdf"))
    with pytest.raises(ValueError, match="another model"):
        coulomb.crba(a1, q, workspace=coulomb.Workspace(coulomb.load_urdf(str(SHARED / "models" / "kuka_iiwa_robot.urdf"))))


def test_type_stubs_are_shipped():
    import pathlib
    package = pathlib.Path(coulomb.__file__).parent
    assert (package / "py.typed").exists()
    stubs = (package / "_core.pyi").read_text()
    for name in ("class Simulator", "def step(self) -> StepStats", "class Model", "class InverseDynamics",
                 "class Recorder"):
        assert name in stubs, name
    assert "[N·m or N]" in stubs  # docstrings with units
