"""The peers' models of a coulomb scene, built from `coulomb_peer_bench export` (neutral JSON).

mjcf(export) needs only the standard library (ctest's peer_bench_export checks it without the
peers installed); mujoco_model() and drake_model() import their engine when called.

What is the same in every engine (checked by check_mujoco / check_drake before anything is
timed): the bodies (mass, centre of mass, inertia about it), the joints (type, axis, placement,
limits, damping), the collision shapes and their poses, the joint springs, the time step, gravity
and the starting state. Contact parameters are matched where the engine has the same parameter
(docs/benchmarks-peers.md, "What is matched").

MuJoCo model: one MJCF <body> per coulomb body, named alike, with an explicit <inertial>; a
massless body (MuJoCo refuses them) whose only child sits at its joint frame (X_PJ = identity) is
merged into that child as a body with several joints, which MuJoCo applies in order: the same
kinematics. Collision filtering by contype/conaffinity: robot geoms (contype 2, conaffinity 1)
touch everything but their own robot; other moving geoms (1, 3) touch everything; world geoms
never touch each other (same body), as in coulomb.
"""
import math

# contype / conaffinity (see the module docstring)
_ROBOT = (2, 1)
_OTHER = (1, 3)


def _f(x):
    return repr(float(x))


def _v(v):
    return " ".join(_f(x) for x in v)


def _geom_xml(g, pose_key, mu):
    s = g["shape"]
    t = s["type"]
    if t == "sphere":
        typ, size = "sphere", _f(s["radius"])
    elif t == "box":
        typ, size = "box", _v([0.5 * x for x in s["size"]])
    elif t in ("capsule", "cylinder"):
        typ, size = t, f"{_f(s['radius'])} {_f(0.5 * s['length'])}"
    elif t == "halfspace":
        typ, size = "plane", "0 0 1"
    else:
        raise ValueError(f"bench/peers: shape {t} of geometry {g['name']} has no peer counterpart")
    p = g[pose_key]
    ct, ca = _ROBOT if g["robot"] >= 0 and not g["self_collision"] else _OTHER
    return (f'<geom name="{g["name"]}" type="{typ}" size="{size}" pos="{_v(p["position"])}" '
            f'quat="{_v(p["quaternion"])}" condim="3" friction="{_f(mu)} 0 0" contype="{ct}" conaffinity="{ca}"/>')


def check_supported(export):
    """Raises ValueError for what the peer models do not translate."""
    for key in ("num_actuators", "num_couplers", "num_constraints", "num_joint_frictions"):
        if export[key]:
            raise ValueError(f"{export['source']}: {key} = {export[key]}: not translated to the peers")
    for g in export["geometries"]:
        if any(v is not None for v in g["material"].values()):
            raise ValueError(f"{export['source']}: geometry {g['name']} overrides the contact material")
        if g["group"] != 1 or g["mask"] != 0xFFFFFFFF:
            raise ValueError(f"{export['source']}: geometry {g['name']} has collision groups")
    if any(v != 0.0 for v in export["v0"]):
        raise ValueError(f"{export['source']}: the scene does not start at rest")


def mujoco_bodies(export):
    """MuJoCo's bodies: a list of dicts {name, parent (MuJoCo body index, 0 = world), pose (X_PB
    of the first joint), joints [coulomb bodies' joints in order], inertial (coulomb body),
    geoms, coulomb (indices of the coulomb bodies it stands for)}, in an order where parents
    come first."""
    bodies = export["bodies"]
    children = {}
    for b in bodies:
        children.setdefault(b["parent"], []).append(b)
    geoms = {}
    for g in export["geometries"]:
        geoms.setdefault(g["body"], []).append(g)
    out = []
    index_of = {0: 0}  # coulomb body → MuJoCo body (1-based: 0 is the world)

    def visit(b, parent_mj):
        chain = [b]
        while chain[-1]["mass"] == 0.0:
            kids = children.get(chain[-1]["index"], [])
            last = chain[-1]
            if (len(kids) == 1 and not geoms.get(last["index"]) and kids[0]["joint"]["X_PJ"]["position"] == [0, 0, 0]
                    and kids[0]["joint"]["X_PJ"]["quaternion"] == [1, 0, 0, 0] and last["joint"]["type"] != "floating"):
                chain.append(kids[0])
            else:
                raise ValueError(f"{export['source']}: massless body {last['name']} cannot be merged for MuJoCo")
        last = chain[-1]
        out.append({"name": last["name"], "parent": parent_mj, "pose": chain[0]["joint"]["X_PJ"],
                    "joints": [c["joint"] for c in chain if c["joint"]["type"] != "fixed"],
                    "inertial": last, "geoms": geoms.get(last["index"], []),
                    "coulomb": [c["index"] for c in chain]})
        me = len(out)
        for c in chain:
            index_of[c["index"]] = me
        for kid in children.get(last["index"], []):
            visit(kid, me)

    for b in children.get(0, []):
        visit(b, 0)
    return out


def mjcf(export, solver="Newton", name="scene"):
    """MJCF text of the scene (MuJoCo ≥ 3)."""
    check_supported(export)
    mu = export["contact"]["mu"]
    springs = {s["joint"]: s for s in export["springs"]}
    bodies = mujoco_bodies(export)
    lines = [f'<mujoco model="{name}">',
             '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
             f'  <option timestep="{_f(export["time_step"])}" gravity="{_v(export["gravity"])}" cone="elliptic" '
             f'solver="{solver}" tolerance="1e-8" integrator="Euler"/>',
             '  <worldbody>']
    for g in export["geometries"]:
        if g["body"] == 0:
            lines.append("    " + _geom_xml(g, "X_WG", mu))
    kids = {}
    for i, b in enumerate(bodies, start=1):
        kids.setdefault(b["parent"], []).append(i)

    def emit(i, depth):
        b = bodies[i - 1]
        pad = "  " * depth
        p = b["pose"]
        lines.append(f'{pad}<body name="{b["name"]}" pos="{_v(p["position"])}" quat="{_v(p["quaternion"])}">')
        for j in b["joints"]:
            if j["type"] == "floating":
                lines.append(f'{pad}  <freejoint name="{j["name"]}"/>')
                continue
            attrs = f'name="{j["name"]}" type="{"hinge" if j["type"] == "revolute" else "slide"}" axis="{_v(j["axis"])}"'
            damping = j["damping"]
            if j["lower"] is not None and j["upper"] is not None:
                attrs += f' range="{_f(j["lower"])} {_f(j["upper"])}"'
            elif j["lower"] is not None or j["upper"] is not None:
                raise ValueError(f"joint {j['name']}: one-sided limits are not translated")
            if j["name"] in springs:
                s = springs[j["name"]]
                attrs += f' stiffness="{_f(s["stiffness"])}" springref="{_f(s["rest_position"])}"'
                damping += s["damping"]
            if damping:
                attrs += f' damping="{_f(damping)}"'
            lines.append(f"{pad}  <joint {attrs}/>")
        c = b["inertial"]
        I = c["inertia_com"]
        lines.append(f'{pad}  <inertial pos="{_v(c["com"])}" mass="{_f(c["mass"])}" fullinertia="'
                     f'{_f(I[0][0])} {_f(I[1][1])} {_f(I[2][2])} {_f(I[0][1])} {_f(I[0][2])} {_f(I[1][2])}"/>')
        for g in b["geoms"]:
            lines.append(f"{pad}  " + _geom_xml(g, "X_BG", mu))
        for k in kids.get(i, []):
            emit(k, depth + 1)
        lines.append(f"{pad}</body>")

    for i in kids.get(0, []):
        emit(i, 2)
    lines += ["  </worldbody>", "</mujoco>", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Small rigid-body helpers (standard library) shared by the checks.

def quat_to_matrix(q):
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]


def matmul(A, B):
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def matvec(A, v):
    return [sum(A[i][k] * v[k] for k in range(3)) for i in range(3)]


def transpose(A):
    return [[A[j][i] for j in range(3)] for i in range(3)]


def axis_angle(axis, angle):
    x, y, z = axis
    n = math.sqrt(x * x + y * y + z * z)
    x, y, z = x / n, y / n, z / n
    c, s = math.cos(angle), math.sin(angle)
    C = 1 - c
    return [[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C]]


def _flat(a):
    if isinstance(a, (int, float)):
        return [float(a)]
    return [x for row in a for x in _flat(row)]


def max_abs_diff(a, b):
    return max(abs(x - y) for x, y in zip(_flat(a), _flat(b)))


def close(name, what, got, want, tol):
    """Raises AssertionError unless |got − want| ≤ tol · max(1, |want|) elementwise."""
    d = max_abs_diff(got, want)
    scale = max([1.0] + [abs(x) for x in _flat(want)])
    if d > tol * scale:
        raise AssertionError(f"{name}: {what} differs from coulomb's by {d:.3g} (got {got}, want {want})")
    return d


# ---------------------------------------------------------------------------------------------
# MuJoCo

def mujoco_model(export, solver):
    """(MjModel, qpos index map) for solver "Newton" or "CG". qpos_map maps coulomb q to MuJoCo
    qpos: qpos[qpos_map] = q (every scene's coordinates are the same numbers in both)."""
    import mujoco
    import numpy as np
    m = mujoco.MjModel.from_xml_string(mjcf(export, solver))
    qmap = np.zeros(export["nq"], dtype=int)
    for b in export["bodies"]:
        j = b["joint"]
        if j["type"] == "fixed":
            continue
        jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j["name"])
        if jid < 0:
            raise ValueError(f"MuJoCo has no joint {j['name']}")
        n = 7 if j["type"] == "floating" else 1
        a = m.jnt_qposadr[jid]
        qmap[j["q_index"]:j["q_index"] + n] = np.arange(a, a + n)
    if m.nq != export["nq"] or m.nv != export["nv"] or len(set(qmap.tolist())) != m.nq:
        raise ValueError("MuJoCo's coordinates do not map one to one onto coulomb's")
    return m, qmap


def check_mujoco(export, m, qmap, tol=1e-9):
    """Bodies (mass, centre of mass and inertia in the world), joints (axis, origin), geometries
    (type, size, pose) at q0, as MuJoCo computes them from its own model. Returns the checks."""
    import mujoco
    import numpy as np
    d = mujoco.MjData(m)
    d.qpos[qmap] = export["q0"]
    mujoco.mj_kinematics(m, d)
    name = export["source"]
    n = 0
    for b in export["bodies"]:
        bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b["name"])
        if b["mass"] == 0.0 and bid < 0:
            continue  # merged into its child
        close(name, f"body {b['name']} mass", float(m.body_mass[bid]), b["mass"], tol)
        close(name, f"body {b['name']} com_W", d.xipos[bid].tolist(), b["com_W"], tol)
        R = d.ximat[bid].reshape(3, 3)
        I_W = R @ np.diag(m.body_inertia[bid]) @ R.T
        close(name, f"body {b['name']} inertia_W", I_W.tolist(), b["inertia_com_W"], tol)
        j = b["joint"]
        if j["type"] in ("revolute", "prismatic"):
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j["name"])
            close(name, f"joint {j['name']} axis_W", d.xaxis[jid].tolist(), j["axis_W"], tol)
            if j["type"] == "revolute":
                close(name, f"joint {j['name']} origin_W", d.xanchor[jid].tolist(), j["origin_W"], tol)
        n += 1
    for g in export["geometries"]:
        gid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g["name"])
        if gid < 0:
            raise AssertionError(f"{name}: MuJoCo has no geometry {g['name']}")
        close(name, f"geometry {g['name']} position", d.geom_xpos[gid].tolist(), g["X_WG"]["position"], tol)
        close(name, f"geometry {g['name']} rotation", d.geom_xmat[gid].reshape(3, 3).tolist(),
              quat_to_matrix(g["X_WG"]["quaternion"]), tol)
        n += 1
    total = float(sum(m.body_mass))
    close(name, "total mass", total, export["total_mass"], tol)
    return n


# ---------------------------------------------------------------------------------------------
# Drake

class DrakeModel:
    """A Drake diagram (MultibodyPlant + SceneGraph) of the scene with one discrete contact
    approximation ("sap" or "lagged"), and the map from coulomb's q to the plant's positions."""

    def __init__(self, export, approximation):
        from pydrake.geometry import (Box, Capsule, CollisionFilterDeclaration, Cylinder, GeometrySet, HalfSpace,
                                      ProximityProperties, Sphere)
        from pydrake.math import RigidTransform, RotationMatrix
        from pydrake.multibody.plant import (AddMultibodyPlant, CoulombFriction, MultibodyPlantConfig)
        from pydrake.multibody.tree import (FixedOffsetFrame, PrismaticJoint, PrismaticSpring,
                                            QuaternionFloatingJoint, RevoluteJoint, RevoluteSpring, RotationalInertia,
                                            SpatialInertia, WeldJoint)
        from pydrake.common.eigen_geometry import Quaternion
        from pydrake.systems.framework import DiagramBuilder
        import numpy as np
        check_supported(export)
        self.export = export
        c = export["contact"]
        builder = DiagramBuilder()
        config = MultibodyPlantConfig(time_step=export["time_step"], discrete_contact_approximation=approximation,
                                      contact_model="point", stiction_tolerance=c["stiction_tolerance"])
        plant, scene_graph = AddMultibodyPlant(config, builder)
        plant.mutable_gravity_field().set_gravity_vector(export["gravity"])
        instance = plant.AddModelInstance("scene")

        def transform(p):
            w, x, y, z = p["quaternion"]
            return RigidTransform(RotationMatrix(Quaternion(w, x, y, z)), np.array(p["position"]))

        bodies = {0: plant.world_body()}
        for b in export["bodies"]:
            I = np.array(b["inertia_com"])
            if b["mass"] == 0.0:
                M = SpatialInertia.Zero()
            else:
                M = SpatialInertia.MakeFromCentralInertia(b["mass"], np.array(b["com"]),
                                                          RotationalInertia(I[0, 0], I[1, 1], I[2, 2], I[0, 1],
                                                                            I[0, 2], I[1, 2]))
            bodies[b["index"]] = plant.AddRigidBody(b["name"], instance, M)
        springs = {s["joint"]: s for s in export["springs"]}
        self.joints = {}
        for b in export["bodies"]:
            j = b["joint"]
            parent, child = bodies[b["parent"]], bodies[b["index"]]
            if j["type"] == "floating":
                joint = plant.AddJoint(QuaternionFloatingJoint(j["name"], parent.body_frame(), child.body_frame()))
            else:
                F = plant.AddFrame(FixedOffsetFrame(j["name"] + "_F", parent.body_frame(), transform(j["X_PJ"])))
                if j["type"] == "fixed":
                    joint = plant.AddJoint(WeldJoint(j["name"], F, child.body_frame(), RigidTransform()))
                else:
                    lo = -np.inf if j["lower"] is None else j["lower"]
                    hi = np.inf if j["upper"] is None else j["upper"]
                    damping = j["damping"] + (springs[j["name"]]["damping"] if j["name"] in springs else 0.0)
                    kind = RevoluteJoint if j["type"] == "revolute" else PrismaticJoint
                    joint = plant.AddJoint(kind(j["name"], F, child.body_frame(), np.array(j["axis"]), lo, hi, damping))
                    if j["name"] in springs:
                        s = springs[j["name"]]
                        spring = RevoluteSpring if j["type"] == "revolute" else PrismaticSpring
                        plant.AddForceElement(spring(joint, s["rest_position"], s["stiffness"]))
            self.joints[b["index"]] = joint

        # Drake combines per-geometry values: stiffness in series k = k_A k_B / (k_A + k_B),
        # τ = τ_A + τ_B, d = (k_B d_A + k_A d_B) / (k_A + k_B), μ = 2 μ_A μ_B / (μ_A + μ_B). Each
        # geometry gets 2k, τ/2, d and μ, so that every pair has coulomb's k, τ_d, d and μ.
        k = c["stiffness"] if c["stiffness"] is not None else 1e20
        shapes = {"sphere": lambda s: Sphere(s["radius"]), "box": lambda s: Box(*s["size"]),
                  "cylinder": lambda s: Cylinder(s["radius"], s["length"]),
                  "capsule": lambda s: Capsule(s["radius"], s["length"]), "halfspace": lambda s: HalfSpace()}
        self.geometry_ids = {}
        robot_sets = {}
        for g in export["geometries"]:
            props = ProximityProperties()
            props.AddProperty("material", "coulomb_friction", CoulombFriction(c["mu"], c["mu"]))
            props.AddProperty("material", "point_contact_stiffness", 2.0 * k)
            props.AddProperty("material", "hunt_crossley_dissipation", c["hunt_crossley_dissipation"])
            props.AddProperty("material", "relaxation_time", 0.5 * c["dissipation_time"])
            gid = plant.RegisterCollisionGeometry(bodies[g["body"]], transform(g["X_BG"]),
                                                  shapes[g["shape"]["type"]](g["shape"]), g["name"], props)
            self.geometry_ids[g["name"]] = gid
            if g["robot"] >= 0 and not g["self_collision"]:
                robot_sets.setdefault(g["robot"], []).append(gid)
        plant.Finalize()
        for ids in robot_sets.values():
            scene_graph.collision_filter_manager().Apply(CollisionFilterDeclaration().ExcludeWithin(GeometrySet(ids)))
        self.diagram = builder.Build()
        self.plant, self.scene_graph = plant, scene_graph
        # coulomb q → plant positions. QuaternionFloatingJoint positions are [qw qx qy qz x y z].
        qmap = np.zeros(export["nq"], dtype=int)
        for b in export["bodies"]:
            j, joint = b["joint"], self.joints[b["index"]]
            if j["type"] == "floating":
                s = joint.position_start()
                qmap[j["q_index"]:j["q_index"] + 7] = [s + 4, s + 5, s + 6, s, s + 1, s + 2, s + 3]
            elif j["type"] != "fixed":
                qmap[j["q_index"]] = joint.position_start()
        if plant.num_positions() != export["nq"] or plant.num_velocities() != export["nv"]:
            raise ValueError("Drake's coordinates do not match coulomb's in number")
        self.qmap = qmap

    def new_context(self, q):
        import numpy as np
        context = self.diagram.CreateDefaultContext()
        plant_context = self.plant.GetMyMutableContextFromRoot(context)
        x = np.zeros(self.plant.num_positions())
        x[self.qmap] = q
        self.plant.SetPositions(plant_context, x)
        self.plant.SetVelocities(plant_context, np.zeros(self.plant.num_velocities()))
        return context

    def check(self, tol=1e-9):
        """As check_mujoco, from the plant's own kinematics at q0."""
        import numpy as np
        export = self.export
        name = export["source"]
        context = self.new_context(export["q0"])
        pc = self.plant.GetMyContextFromRoot(context)
        n = 0
        total = 0.0
        for b in export["bodies"]:
            body = self.plant.GetBodyByName(b["name"])
            X = body.EvalPoseInWorld(pc)
            M = body.CalcSpatialInertiaInBodyFrame(pc)
            total += M.get_mass()
            close(name, f"body {b['name']} mass", M.get_mass(), b["mass"], tol)
            close(name, f"body {b['name']} pose", X.translation().tolist(), b["X_WB"]["position"], tol)
            if b["mass"] > 0:
                R = X.rotation().matrix()
                com_W = X.translation() + R @ M.get_com()
                close(name, f"body {b['name']} com_W", com_W.tolist(), b["com_W"], tol)
                I_W = R @ M.Shift(M.get_com()).CalcRotationalInertia().CopyToFullMatrix3() @ R.T
                close(name, f"body {b['name']} inertia_W", I_W.tolist(), b["inertia_com_W"], tol)
            n += 1
        qo = self.scene_graph.get_query_output_port().Eval(self.scene_graph.GetMyContextFromRoot(context))
        for g in export["geometries"]:
            X = qo.GetPoseInWorld(self.geometry_ids[g["name"]])
            close(name, f"geometry {g['name']} position", X.translation().tolist(), g["X_WG"]["position"], tol)
            close(name, f"geometry {g['name']} rotation", X.rotation().matrix().tolist(),
                  quat_to_matrix(g["X_WG"]["quaternion"]), tol)
            n += 1
        close(name, "total mass", total, export["total_mass"], tol)
        return n
