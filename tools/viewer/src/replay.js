// The browser side of replay.html (written by `coulomb simulate`, src/io/replay_writer.cc).
// Bundled with three.js and OrbitControls by build.mjs into the coulomb library; runs offline.
//
// Data: the JSON in <script id="coulomb-replay-data"> (format "coulomb-replay", version 1):
// scene description (bodies with their collision geometries, static geometry), and `data`,
// the base64 of a zlib (deflate) stream of little-endian arrays listed in `layout`
// ({name: [byte offset, count]}):
//   times            float64[F]        frame times [s]
//   positions        int32[B][3][F]    body origins in the world, units of position_quantum [m],
//                                      delta-coded along the frames (wrapping int32)
//   quaternions      int16[B][4][F]    body orientations (w, x, y, z) × quaternion_scale,
//                                      delta-coded along the frames (wrapping int16)
//   contact_counts   int32[F]          contacts of each frame (the contacts of the step that ended there)
//   contact_points   int32[3][C]       contact points, units of position_quantum, delta-coded along C
//   contact_impulses int16[6][C]       impulse on body B in the world frame: normal part (x, y, z) then
//                                      friction part (x, y, z), units of impulse_quantum [N·s]
// Visual geometry (URDF <visual>): bodies[i].visuals and static_visuals list primitives and mesh
// uses ({type: 'mesh', mesh: index into visual_meshes, p, q, rgba?}); each mesh file is stored
// once in `mesh_data` (base64 of a zlib stream): per part of visual_meshes[k].parts, positions
// uint16[nv][3] over the part's box lo..hi and triangle indices (uint16 or uint32, index_bytes).
// Normals are computed here. Visuals are drawn by default; collision shapes are an overlay
// (bodies without visuals always show their collision shapes; geometries[i].covered marks those
// that a visual stands for).
import {
  ACESFilmicToneMapping, AmbientLight, BoxGeometry, BufferAttribute, BufferGeometry, CapsuleGeometry, Color,
  ConeGeometry, CylinderGeometry, DirectionalLight, DoubleSide, Group, HemisphereLight, InstancedMesh, Matrix4,
  Mesh, MeshBasicMaterial, MeshStandardMaterial, PCFShadowMap, PerspectiveCamera, PlaneGeometry, Quaternion,
  Scene, SphereGeometry, SRGBColorSpace, Vector3, WebGLRenderer,
} from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';

const $ = (id) => document.getElementById(id);

function showError(error) {
  const box = $('error');
  box.textContent = 'replay.html could not be shown: ' + (error && error.message ? error.message : String(error));
  box.style.display = 'block';
  console.error(error);
}

function base64ToBytes(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; ++i) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function inflate(bytes) {
  if (typeof DecompressionStream === 'undefined')
    throw new Error('this browser lacks DecompressionStream (use a current Chromium, Firefox or Safari)');
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Response(stream).arrayBuffer();
}

function section(buffer, layout, name, Type) {
  const [offset, count] = layout[name];
  return new Type(buffer.slice(offset, offset + count * Type.BYTES_PER_ELEMENT));
}

// Decodes the frame arrays into per-frame layouts that are fast to read while playing.
function decodeFrames(meta, buffer) {
  const F = meta.num_frames, B = meta.bodies.length, L = meta.layout;
  const times = section(buffer, L, 'times', Float64Array);
  const rawPositions = section(buffer, L, 'positions', Int32Array);
  const rawQuaternions = section(buffer, L, 'quaternions', Int16Array);
  const positions = new Float64Array(F * B * 3);
  const quaternions = new Float32Array(F * B * 4);  // x, y, z, w (three.js order)
  const pq = meta.position_quantum, qs = meta.quaternion_scale;
  for (let b = 0; b < B; ++b) {
    for (let c = 0; c < 3; ++c) {
      let acc = 0;
      const base = (b * 3 + c) * F;
      for (let f = 0; f < F; ++f) {
        acc = (acc + rawPositions[base + f]) | 0;
        positions[(f * B + b) * 3 + c] = acc * pq;
      }
    }
    for (let c = 0; c < 4; ++c) {
      let acc = 0;
      const base = (b * 4 + c) * F;
      const to = c === 0 ? 3 : c - 1;  // (w, x, y, z) -> (x, y, z, w)
      for (let f = 0; f < F; ++f) {
        acc = ((acc + rawQuaternions[base + f]) << 16) >> 16;
        quaternions[(f * B + b) * 4 + to] = acc / qs;
      }
    }
  }
  const counts = section(buffer, L, 'contact_counts', Int32Array);
  const C = meta.num_contacts;
  const rawPoints = section(buffer, L, 'contact_points', Int32Array);
  const rawImpulses = section(buffer, L, 'contact_impulses', Int16Array);
  const points = new Float32Array(C * 3), impulses = new Float32Array(C * 6);
  for (let c = 0; c < 3; ++c) {
    let acc = 0;
    for (let k = 0; k < C; ++k) {
      acc = (acc + rawPoints[c * C + k]) | 0;
      points[k * 3 + c] = acc * pq;
    }
  }
  const iq = meta.impulse_quantum;
  for (let c = 0; c < 6; ++c)
    for (let k = 0; k < C; ++k) impulses[k * 6 + c] = rawImpulses[c * C + k] * iq;
  const firstContact = new Int32Array(F + 1);
  for (let f = 0; f < F; ++f) firstContact[f + 1] = firstContact[f] + counts[f];
  return { times, positions, quaternions, firstContact, points, impulses };
}

function color(rgba) {
  return new Color().setRGB(rgba[0], rgba[1], rgba[2], SRGBColorSpace);
}

// Radius of a sphere about the geometry frame's origin that holds the shape (0 for a half-space).
function shapeExtent(g) {
  switch (g.type) {
    case 'sphere': return g.radius;
    case 'box': return 0.5 * Math.hypot(g.size[0], g.size[1], g.size[2]);
    case 'capsule': return g.radius + 0.5 * g.length;
    case 'cylinder': return Math.hypot(g.radius, 0.5 * g.length);
    case 'convex_mesh':
    case 'mesh': {
      let r = 0;
      for (let i = 0; i < g.vertices.length; i += 3) r = Math.max(r, Math.hypot(g.vertices[i], g.vertices[i + 1], g.vertices[i + 2]));
      return r;
    }
    default: return 0;
  }
}

function makeShapeGeometry(g, planeSize) {
  switch (g.type) {
    case 'sphere': return new SphereGeometry(g.radius, 32, 16);
    case 'box': return new BoxGeometry(g.size[0], g.size[1], g.size[2]);
    case 'capsule': return new CapsuleGeometry(g.radius, g.length, 8, 24).rotateX(Math.PI / 2);    // axis y -> z
    case 'cylinder': return new CylinderGeometry(g.radius, g.radius, g.length, 32).rotateX(Math.PI / 2);
    case 'halfspace': return new PlaneGeometry(planeSize, planeSize);  // z = 0 of G, normal +z
    case 'convex_mesh':
    case 'mesh': {  // a static mesh (terrain): its triangles as given, flat-shaded
      const geometry = new BufferGeometry();
      geometry.setAttribute('position', new BufferAttribute(new Float32Array(g.vertices), 3));
      geometry.setIndex(g.triangles);
      const flat = geometry.toNonIndexed();
      flat.computeVertexNormals();
      return flat;
    }
    default: throw new Error(`geometry '${g.name}': unknown shape type '${g.type}'`);
  }
}

function makeShapeMesh(g, planeSize) {
  const rgba = g.rgba || [0.7, 0.7, 0.7, 1];
  const material = new MeshStandardMaterial({
    color: color(rgba), roughness: 0.75, metalness: 0.05,
    transparent: rgba[3] < 1, opacity: rgba[3], depthWrite: rgba[3] >= 1,
  });
  if (g.type === 'halfspace') material.side = DoubleSide;
  const mesh = new Mesh(makeShapeGeometry(g, planeSize), material);
  mesh.name = g.name;
  mesh.position.set(g.p[0], g.p[1], g.p[2]);
  mesh.quaternion.set(g.q[1], g.q[2], g.q[3], g.q[0]);
  mesh.castShadow = g.type !== 'halfspace' && rgba[3] >= 0.5;
  mesh.userData.castShadow = mesh.castShadow;
  mesh.receiveShadow = true;
  return mesh;
}

// Decoded visual meshes: for each of meta.visual_meshes, its parts as {geometry, rgba}.
async function decodeVisualMeshes(meta) {
  const list = meta.visual_meshes || [];
  if (list.length === 0) return [];
  const buffer = await inflate(base64ToBytes(meta.mesh_data));
  return list.map((m) => m.parts.map((p) => {
    const [vo, nv] = p.vertices;
    const raw = new Uint16Array(buffer.slice(vo, vo + nv * 6));
    const positions = new Float32Array(nv * 3);
    for (let c = 0; c < 3; ++c) {
      const lo = p.lo[c], step = (p.hi[c] - p.lo[c]) / 65535;
      for (let i = 0; i < nv; ++i) positions[3 * i + c] = lo + raw[3 * i + c] * step;
    }
    const [io, ni] = p.indices;
    const Index = p.index_bytes === 2 ? Uint16Array : Uint32Array;
    const indices = new Index(buffer.slice(io, io + ni * Index.BYTES_PER_ELEMENT));
    const geometry = new BufferGeometry();
    geometry.setAttribute('position', new BufferAttribute(positions, 3));
    geometry.setIndex(new BufferAttribute(indices, 1));
    geometry.computeVertexNormals();
    return { geometry, rgba: p.rgba };
  }));
}

function makeMaterial(rgba) {
  return new MeshStandardMaterial({
    color: color(rgba), roughness: 0.6, metalness: 0.05,
    transparent: rgba[3] < 1, opacity: rgba[3], depthWrite: rgba[3] >= 1,
  });
}

// One <visual>: a primitive, or a group of the mesh's parts (geometry shared by every use).
function makeVisualObject(v, meshes) {
  let object;
  if (v.type === 'mesh') {
    object = new Group();
    for (const part of meshes[v.mesh]) {
      const rgba = v.rgba || part.rgba || [0.7, 0.7, 0.7, 1];
      const mesh = new Mesh(part.geometry, makeMaterial(rgba));
      mesh.castShadow = rgba[3] >= 0.5;
      mesh.receiveShadow = true;
      object.add(mesh);
    }
  } else {
    const rgba = v.rgba || [0.7, 0.7, 0.7, 1];
    object = new Mesh(makeShapeGeometry(v, 1), makeMaterial(rgba));
    object.castShadow = rgba[3] >= 0.5;
    object.receiveShadow = true;
  }
  object.name = v.name;
  object.position.set(v.p[0], v.p[1], v.p[2]);
  object.quaternion.set(v.q[1], v.q[2], v.q[3], v.q[0]);
  return object;
}

// A body's (or the world's) drawing: its collision shapes and its visuals as two child groups.
function makeBodyGroups(parent, geometries, visuals, meshes, planeSize) {
  // Collision shapes a visual stands for (`covered`) go to `collision`, an overlay; the others
  // (e.g. the ground under a robot welded to the world) are always drawn.
  const collision = new Group(), visual = new Group();
  collision.name = 'collision';
  visual.name = 'visual';
  for (const v of visuals || []) visual.add(makeVisualObject(v, meshes));
  const hasVisuals = visual.children.length > 0;
  for (const g of geometries) (hasVisuals && g.covered ? collision : parent).add(makeShapeMesh(g, planeSize));
  parent.add(collision, visual);
  return { collision, visual, hasVisuals };
}

// Instanced arrows: a shaft (unit cylinder from y = 0 to 1) and a head (unit cone).
class Arrows {
  constructor(scene, capacity, hex) {
    const material = new MeshBasicMaterial({ color: hex, depthTest: false, transparent: true, opacity: 0.9 });
    this.shaft = new InstancedMesh(new CylinderGeometry(1, 1, 1, 8).translate(0, 0.5, 0), material, Math.max(1, capacity));
    this.head = new InstancedMesh(new ConeGeometry(1, 1, 12).translate(0, 0.5, 0), material, Math.max(1, capacity));
    for (const m of [this.shaft, this.head]) {
      m.count = 0;
      m.renderOrder = 10;
      m.frustumCulled = false;
      scene.add(m);
    }
    this._m = new Matrix4(); this._q = new Quaternion(); this._s = new Vector3(); this._p = new Vector3();
    this._d = new Vector3(); this._up = new Vector3(0, 1, 0);
  }
  set visible(v) { this.shaft.visible = this.head.visible = v; }
  begin() { this.n = 0; }
  add(px, py, pz, vx, vy, vz, scale, width) {
    const len = Math.hypot(vx, vy, vz) * scale;
    if (!(len > width)) return;
    this._d.set(vx, vy, vz).normalize();
    this._q.setFromUnitVectors(this._up, this._d);
    const headLength = Math.min(0.35 * len, 4 * width);
    this._p.set(px, py, pz);
    this._m.compose(this._p, this._q, this._s.set(width, len - headLength, width));
    this.shaft.setMatrixAt(this.n, this._m);
    this._p.addScaledVector(this._d, len - headLength);
    this._m.compose(this._p, this._q, this._s.set(2.2 * width, headLength, 2.2 * width));
    this.head.setMatrixAt(this.n, this._m);
    ++this.n;
  }
  end() {
    this.shaft.count = this.head.count = this.n;
    this.shaft.instanceMatrix.needsUpdate = this.head.instanceMatrix.needsUpdate = true;
  }
}

function percentile(values, p) {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function main() {
  const meta = JSON.parse($('coulomb-replay-data').textContent);
  if (meta.format !== 'coulomb-replay') throw new Error('no replay data in this file');
  const buffer = await inflate(base64ToBytes(meta.data));
  const frames = decodeFrames(meta, buffer);
  const visualMeshes = await decodeVisualMeshes(meta);
  const F = meta.num_frames, B = meta.bodies.length;
  const duration = F > 0 ? frames.times[F - 1] : 0;

  document.title = `coulomb replay: ${meta.title}`;
  $('title').textContent = meta.title;
  $('subtitle').textContent = `${B} bodies · ${F} frames over ${duration.toFixed(3)} s · time step ${meta.time_step} s`;

  // ---- framing: where the bodies spend the run. Centre: the median of the body origins over the
  // frames; radius: the 85 % quantile of their distances from it, grown by a typical body size.
  // A few objects flying off then do not shrink the view ----
  const bodyExtent = meta.bodies.map((body) =>
    body.geometries.reduce((r, g) => Math.max(r, Math.hypot(g.p[0], g.p[1], g.p[2]) + shapeExtent(g)), 0));
  const center = new Vector3();
  let radius = 0;
  if (B > 0 && F > 0) {
    const samples = [[], [], []];
    const stride = Math.max(1, Math.floor(F / 120));
    for (let f = 0; f < F; f += stride)
      for (let b = 0; b < B; ++b)
        for (let c = 0; c < 3; ++c) samples[c].push(frames.positions[(f * B + b) * 3 + c]);
    center.set(...samples.map((v) => percentile(v, 0.5)));
    const distances = samples[0].map((x, i) => Math.hypot(x - center.x, samples[1][i] - center.y, samples[2][i] - center.z));
    radius = percentile(distances, 0.85) + percentile(bodyExtent, 0.9);
  } else {  // no moving bodies: the finite static geometry
    const lo = new Vector3(Infinity, Infinity, Infinity), hi = new Vector3(-Infinity, -Infinity, -Infinity);
    for (const g of meta.static_geometries) {
      const e = shapeExtent(g);
      if (e === 0) continue;
      lo.min(new Vector3(g.p[0] - e, g.p[1] - e, g.p[2] - e));
      hi.max(new Vector3(g.p[0] + e, g.p[1] + e, g.p[2] + e));
    }
    if (lo.x <= hi.x) {
      center.copy(lo).add(hi).multiplyScalar(0.5);
      radius = 0.5 * hi.distanceTo(lo);
    }
  }
  radius = Math.max(0.15, radius || 1);
  const planeSize = Math.max(10, 40 * radius);

  // ---- scene ----
  const view = $('view');
  const renderer = new WebGLRenderer({ antialias: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(view.clientWidth, view.clientHeight);
  renderer.shadowMap.enabled = true;
  renderer.shadowMap.type = PCFShadowMap;
  renderer.toneMapping = ACESFilmicToneMapping;
  view.appendChild(renderer.domElement);

  const scene = new Scene();
  scene.background = new Color(0xdfe4ea);
  scene.add(new HemisphereLight(0xf4f7ff, 0x6b6259, 1.6));
  scene.add(new AmbientLight(0xffffff, 0.35));
  const sun = new DirectionalLight(0xffffff, 2.2);
  sun.position.copy(center).add(new Vector3(0.6, -0.4, 1.2).normalize().multiplyScalar(4 * radius));
  sun.target.position.copy(center);
  sun.castShadow = true;
  sun.shadow.mapSize.set(2048, 2048);
  const sc = sun.shadow.camera;
  sc.left = sc.bottom = -2 * radius; sc.right = sc.top = 2 * radius;
  sc.near = 0.1 * radius; sc.far = 10 * radius;
  sun.shadow.bias = -0.0005;
  scene.add(sun, sun.target);

  const staticGroup = new Group();
  staticGroup.name = 'world';
  const drawings = [makeBodyGroups(staticGroup, meta.static_geometries, meta.static_visuals, visualMeshes, planeSize)];
  scene.add(staticGroup);

  const bodyObjects = meta.bodies.map((body, b) => {
    const group = new Group();
    group.name = body.name;
    group.userData.coulombBody = b;
    drawings.push(makeBodyGroups(group, body.geometries, body.visuals, visualMeshes, planeSize));
    scene.add(group);
    return group;
  });
  const anyVisuals = drawings.some((d) => d.hasVisuals);
  // Visuals on: drawn; collision shapes of bodies with visuals only as a translucent overlay when
  // asked. Visuals off: every collision shape, opaque.
  function applyGeometryVisibility() {
    dirty = true;
    for (const d of drawings) {
      d.visual.visible = state.showVisuals;
      const overlay = state.showVisuals && d.hasVisuals;
      d.collision.visible = !overlay || state.showCollision;
      d.collision.traverse((o) => {
        if (!o.isMesh) return;
        const m = o.material;
        if (m.userData.opacity === undefined) m.userData.opacity = m.opacity;
        const opacity = overlay ? Math.min(0.45, m.userData.opacity) : m.userData.opacity;
        m.opacity = opacity;
        m.transparent = opacity < 1;
        m.depthWrite = opacity >= 1;
        m.needsUpdate = true;
        o.castShadow = !overlay && o.userData.castShadow;
      });
    }
  }

  // contacts
  let maxContacts = 0;
  for (let f = 0; f < F; ++f) maxContacts = Math.max(maxContacts, frames.firstContact[f + 1] - frames.firstContact[f]);
  const dotRadius = Math.min(0.02, Math.max(0.002, 0.006 * radius));
  const dots = new InstancedMesh(new SphereGeometry(1, 12, 8),
    new MeshBasicMaterial({ color: 0xe8161b, depthTest: false, transparent: true, opacity: 0.85 }), Math.max(1, maxContacts));
  dots.count = 0; dots.renderOrder = 11; dots.frustumCulled = false;
  scene.add(dots);
  const normalArrows = new Arrows(scene, maxContacts, 0xf2b705);
  const frictionArrows = new Arrows(scene, maxContacts, 0xd6336c);
  const normals = [];
  for (let k = 0; k < meta.num_contacts; ++k) {
    const i = k * 6;
    normals.push(Math.hypot(frames.impulses[i], frames.impulses[i + 1], frames.impulses[i + 2]));
  }
  // The largest impulses (98 % quantile: a robot's feet rather than the many light objects) get
  // arrows a quarter of the view's radius long.
  const typicalImpulse = percentile(normals.filter((x) => x > 0), 0.98) || 1;
  const baseArrowScale = 0.25 * radius / typicalImpulse;  // [m per N·s]
  const arrowWidth = 0.7 * dotRadius;

  // camera
  const camera = new PerspectiveCamera(40, view.clientWidth / view.clientHeight, 0.01 * radius, 200 * radius);
  camera.up.set(0, 0, 1);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = true;
  controls.dampingFactor = 0.15;
  const home = () => {
    const fov = (camera.fov * Math.PI) / 180;
    const fit = radius / Math.sin(0.5 * Math.min(fov, fov * camera.aspect));
    controls.target.copy(center);
    camera.position.copy(center).add(new Vector3(1.0, -1.55, 0.75).normalize().multiplyScalar(1.15 * fit));
    camera.updateProjectionMatrix();
    controls.update();
  };
  home();

  // ---- playback ----
  const state = { t: 0, playing: false, speed: 1, frame: 0, showContacts: true, showForces: false, arrowScale: 1,
    showVisuals: true, showCollision: false };
  const q0 = new Quaternion(), q1 = new Quaternion();
  const slider = $('slider');
  slider.max = String(duration);

  function frameAt(t) {  // largest f with times[f] <= t (0 if t precedes every frame)
    let lo = 0, hi = F - 1;
    if (F === 0 || t <= frames.times[0]) return 0;
    if (t >= frames.times[hi]) return hi;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (frames.times[mid] <= t) lo = mid; else hi = mid;
    }
    return lo;
  }

  // Render only when something changed (time, toggles, camera, size): idle pages cost nothing.
  let dirty = true;
  controls.addEventListener('change', () => { dirty = true; });
  if (anyVisuals) $('visuals-label').style.display = $('collision-label').style.display = '';
  state.showVisuals = $('show-visuals').checked;
  state.showCollision = $('show-collision').checked;
  $('show-visuals').addEventListener('change', (e) => { state.showVisuals = e.target.checked; applyGeometryVisibility(); });
  $('show-collision').addEventListener('change', (e) => { state.showCollision = e.target.checked; applyGeometryVisibility(); });
  applyGeometryVisibility();

  function updateContacts() {
    dirty = true;
    const f = state.frame;
    const begin = frames.firstContact[f], end = frames.firstContact[f + 1];
    const m = new Matrix4(), s = new Vector3(dotRadius, dotRadius, dotRadius), id = new Quaternion(), p = new Vector3();
    dots.visible = state.showContacts;
    if (state.showContacts) {
      for (let k = begin; k < end; ++k) {
        p.set(frames.points[k * 3], frames.points[k * 3 + 1], frames.points[k * 3 + 2]);
        dots.setMatrixAt(k - begin, m.compose(p, id, s));
      }
      dots.count = end - begin;
      dots.instanceMatrix.needsUpdate = true;
    }
    normalArrows.visible = frictionArrows.visible = state.showForces;
    $('legend').style.display = state.showForces ? 'block' : 'none';
    if (state.showForces) {
      const scale = baseArrowScale * state.arrowScale;
      normalArrows.begin(); frictionArrows.begin();
      for (let k = begin; k < end; ++k) {
        const x = frames.points[k * 3], y = frames.points[k * 3 + 1], z = frames.points[k * 3 + 2], i = k * 6;
        normalArrows.add(x, y, z, frames.impulses[i], frames.impulses[i + 1], frames.impulses[i + 2], scale, arrowWidth);
        frictionArrows.add(x, y, z, frames.impulses[i + 3], frames.impulses[i + 4], frames.impulses[i + 5], scale, arrowWidth);
      }
      normalArrows.end(); frictionArrows.end();
      const tenCm = (0.1 / scale);
      $('scale-note').textContent = ` · 10 cm = ${tenCm.toPrecision(3)} N·s (${(tenCm / meta.time_step).toPrecision(3)} N)`;
    }
  }

  function setTime(t) {
    if (F === 0) return;
    t = Math.min(Math.max(Number(t) || 0, 0), duration);
    state.t = t;
    const f = frameAt(t);
    const g = f + 1 < F ? f + 1 : f;
    const span = frames.times[g] - frames.times[f];
    const a = span > 0 ? Math.min(1, Math.max(0, (t - frames.times[f]) / span)) : 0;
    for (let b = 0; b < B; ++b) {
      const i = (f * B + b) * 3, j = (g * B + b) * 3;
      const P = frames.positions;
      bodyObjects[b].position.set(P[i] + a * (P[j] - P[i]), P[i + 1] + a * (P[j + 1] - P[i + 1]), P[i + 2] + a * (P[j + 2] - P[i + 2]));
      const Q = frames.quaternions, qi = (f * B + b) * 4, qj = (g * B + b) * 4;
      q0.set(Q[qi], Q[qi + 1], Q[qi + 2], Q[qi + 3]).normalize();
      q1.set(Q[qj], Q[qj + 1], Q[qj + 2], Q[qj + 3]).normalize();
      bodyObjects[b].quaternion.slerpQuaternions(q0, q1, a);
    }
    state.frame = a < 0.5 ? f : g;
    updateContacts();
    slider.value = String(t);
    const clock = t.toFixed(3);
    $('clock').textContent = `t = ${clock} s`;
    $('time').textContent = `${clock} / ${duration.toFixed(3)} s`;
  }

  function setPlaying(playing) {
    state.playing = playing;
    if (playing && state.t >= duration) setTime(0);
    $('play').innerHTML = playing ? '&#10074;&#10074;' : '&#9654;';
  }

  slider.addEventListener('input', () => setTime(parseFloat(slider.value)));
  $('play').addEventListener('click', () => setPlaying(!state.playing));
  $('restart').addEventListener('click', () => setTime(0));
  $('speed').addEventListener('change', (e) => { state.speed = parseFloat(e.target.value); });
  $('show-contacts').addEventListener('change', (e) => { state.showContacts = e.target.checked; updateContacts(); });
  $('show-forces').addEventListener('change', (e) => { state.showForces = e.target.checked; updateContacts(); });
  $('force-scale').addEventListener('input', (e) => { state.arrowScale = Math.pow(10, parseFloat(e.target.value)); updateContacts(); });
  $('reset-view').addEventListener('click', home);
  state.showContacts = $('show-contacts').checked;
  state.showForces = $('show-forces').checked;
  // Keys act on the page, not on a focused control (which has its own keys): buttons and
  // check boxes give the focus back after a click.
  for (const el of document.querySelectorAll('#bar button, #bar input[type=checkbox]'))
    el.addEventListener('click', () => el.blur());
  window.addEventListener('keydown', (e) => {
    if (F === 0 || (e.target && ['INPUT', 'SELECT', 'BUTTON'].includes(e.target.tagName))) return;
    const f = frameAt(state.t);
    if (e.code === 'Space') setPlaying(!state.playing);
    else if (e.code === 'Home') setTime(0);
    else if (e.code === 'End') setTime(duration);
    else if (e.code === 'ArrowRight') setTime(frames.times[Math.min(F - 1, f + 1)]);
    else if (e.code === 'ArrowLeft') setTime(frames.times[frames.times[f] < state.t ? f : Math.max(0, f - 1)]);
    else return;
    e.preventDefault();
  });
  window.addEventListener('resize', () => {
    camera.aspect = view.clientWidth / view.clientHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(view.clientWidth, view.clientHeight);
    dirty = true;
  });

  const api = window.coulombReplay;
  Object.assign(api, {
    numBodies: B,
    numFrames: F,
    numContacts: meta.num_contacts,
    duration,
    bodyNames: meta.bodies.map((b) => b.name),
    frameTimes: Array.from(frames.times),
    /** Objects in the three.js scene that stand for a body (one each). */
    bodyObjectCount() {
      let n = 0;
      scene.traverse((o) => { if (o.userData.coulombBody !== undefined) ++n; });
      return n;
    },
    setTime,
    time: () => state.t,
    play: () => setPlaying(true),
    pause: () => setPlaying(false),
    /** Pose of body i as displayed: {position: [x, y, z] m, quaternion: [w, x, y, z]}, world frame. */
    bodyPose(i) {
      const o = bodyObjects[i];
      o.updateMatrixWorld(true);
      const p = new Vector3(), q = new Quaternion();
      o.matrixWorld.decompose(p, q, new Vector3());
      return { position: [p.x, p.y, p.z], quaternion: [q.w, q.x, q.y, q.z] };
    },
    /** Visual meshes stored in the file (distinct files) and visuals drawn per body. */
    numVisualMeshes: visualMeshes.length,
    hasVisuals: anyVisuals,
    showVisuals(on) { $('show-visuals').checked = on; state.showVisuals = on; applyGeometryVisibility(); },
    showCollision(on) { $('show-collision').checked = on; state.showCollision = on; applyGeometryVisibility(); },
    visibleContacts: () => (dots.visible ? dots.count : 0),
    visibleArrows: () => (state.showForces ? normalArrows.shaft.count + frictionArrows.shaft.count : 0),
  });

  setTime(0);
  let last = performance.now();
  function animate(now) {
    const elapsed = Math.min(0.1, (now - last) / 1000);
    last = now;
    if (state.playing) {
      const t = state.t + elapsed * state.speed;
      setTime(t);
      if (t >= duration) setPlaying(false);
    }
    if (controls.update()) dirty = true;
    if (dirty) {
      dirty = false;
      renderer.render(scene, camera);
      api.framesRendered += 1;
    }
    requestAnimationFrame(animate);
  }
  api.ready = true;
  requestAnimationFrame(animate);
  if (F > 1 && !/[?&]paused\b/.test(location.search)) setPlaying(true);
}

window.coulombReplay = { ready: false, framesRendered: 0 };
main().catch((e) => { window.coulombReplay.error = String(e && e.message ? e.message : e); showError(e); });
