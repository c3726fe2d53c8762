// The browser side of report.html (written by `coulomb simulate` and `coulomb report DIR`,
// src/io/report_writer.cc): the stats.json summary and uPlot charts of the steps.csv series.
// Bundled with uPlot by build.mjs into the coulomb library; runs offline.
//
// Data: the JSON in <script id="coulomb-report-data"> (format "coulomb-report", version 1):
//   title, stats (stats.json as written), replay (file name of the replay beside it, or ""),
//   steps: {rows, decimated_to, t[], solver_iterations[], line_search_iterations[], contacts[],
//           momentum_error[], max_penetration_m[], energy_J[], wall_time_s[],
//           status_counts{status: n}, failure_times[], extra: [{name, data[]}]}
// (extra: further numeric columns of steps.csv, one plot each).
// When steps.csv has many rows the writer keeps one point per bucket of consecutive steps (the
// largest value in the bucket; energy: the bucket's last value) and says so in decimated_to.
import uPlot from 'uplot';

const $ = (id) => document.getElementById(id);

function fmt(x, digits = 4) {
  if (typeof x !== 'number') return String(x);
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return x.toLocaleString('en-US');
  const a = Math.abs(x);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(2);
  return x.toPrecision(digits).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

function card(key, value, bad = false) {
  const div = document.createElement('div');
  div.className = 'card' + (bad ? ' bad' : '');
  const k = document.createElement('div'); k.className = 'k'; k.textContent = key;
  const v = document.createElement('div'); v.className = 'v'; v.textContent = value;
  div.append(k, v);
  return div;
}

function summary(stats) {
  const s = $('summary');
  const g = (path) => path.split('.').reduce((o, k) => (o && k in o ? o[k] : undefined), stats);
  const add = (key, value, bad) => { if (value !== undefined && !value.includes('undefined')) s.append(card(key, value, bad)); };
  add('simulated time', `${fmt(g('sim_time_s'))} s`);
  add('steps × time step', `${fmt(g('steps'))} × ${fmt(g('time_step_s'))} s`);
  add('wall time', `${fmt(g('wall_time_s'))} s`);
  add('real-time factor', fmt(g('real_time_factor'), 3));
  add('solver / integrator', `${g('solver')} / ${g('integrator')}`);
  add('degrees of freedom', fmt(g('dofs')));
  add('SAP iterations mean / max', `${fmt(g('solver_iterations.mean'), 3)} / ${fmt(g('solver_iterations.max'))}`);
  add('contacts mean / max', `${fmt(g('contacts.mean'), 3)} / ${fmt(g('contacts.max'))}`);
  add('momentum error mean / max', `${fmt(g('momentum_error.mean'))} / ${fmt(g('momentum_error.max'))}`);
  add('max penetration', `${fmt(1e3 * g('max_penetration_m'), 3)} mm`);
  add('energy initial → final', `${fmt(g('energy.initial_J'))} → ${fmt(g('energy.final_J'))} J`);
  const failures = g('failures');
  add('failed SAP solves', fmt(failures), failures > 0);
}

// Tick labels of a linear axis: enough digits to tell neighbouring ticks apart, exponent form
// for very small or large magnitudes (uPlot's default printed every tick of a 1e-5 range as "0").
function linearTicks(u, splits) {
  const finite = splits.filter((v) => v != null && Number.isFinite(v));
  if (finite.length === 0) return splits.map(() => '');
  const step = finite.length > 1 ? Math.abs(finite[1] - finite[0]) : Math.abs(finite[0]) || 1;
  const big = Math.max(...finite.map(Math.abs));
  if (big !== 0 && (big < 1e-3 || big >= 1e6)) {
    const digits = Math.max(0, Math.min(6, Math.ceil(Math.log10(big / step))));
    return splits.map((v) => (v == null ? '' : v === 0 ? '0' : v.toExponential(digits)));
  }
  const decimals = Math.max(0, Math.min(10, -Math.floor(Math.log10(step) + 1e-9)));
  return splits.map((v) => (v == null ? '' : v.toFixed(decimals)));
}

const isPowerOfTen = (v) => v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-6;
const decades = (u, splits) => splits.map((v) => (isPowerOfTen(v) ? v : null));

function makePlot(container, title, what, t, series, options = {}) {
  const box = document.createElement('div');
  box.className = 'plot';
  const h = document.createElement('h2'); h.textContent = title;
  const p = document.createElement('div'); p.className = 'what'; p.textContent = what;
  box.append(h, p);
  container.append(box);
  const width = Math.max(300, box.clientWidth - 20);
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22',
    '#17becf', '#393b79', '#637939'];
  const opts = {
    width, height: 230,
    scales: { x: { time: false }, y: options.log ? { distr: 3 } : {} },
    axes: [{ label: 't [s]' }, {
      label: options.unit || '', size: 70,
      // log scale: ticks, grid lines and labels at the powers of ten only
      filter: options.log ? decades : undefined,
      grid: options.log ? { filter: decades } : {},
      ticks: options.log ? { filter: decades } : {},
      values: options.log ? (u, splits) => splits.map((v) => (v != null && isPowerOfTen(v) ? v.toExponential(0) : '')) : linearTicks,
    }],
    legend: { live: true },
    cursor: { drag: { x: true, y: false } },
    series: [{ label: 't [s]', value: (u, v) => (v == null ? '–' : v.toFixed(4)) },
      ...series.map((s, i) => ({
        label: s.label, stroke: s.color || colors[i % colors.length], width: 1.25,
        dash: s.dash, points: { show: false }, spanGaps: false,
        value: (u, v) => (v == null ? '–' : fmt(v)),
      }))],
  };
  const plot = new uPlot(opts, [t, ...series.map((s) => s.data)], box);
  return plot;
}

// The robot, from trajectory.csv (RobotSeries in src/io/report_writer.cc): joint positions,
// velocities and torques (one series per joint), contact forces per body, base height and
// orientation. Missing columns are skipped (folders from older runs still open).
function robotPlots(robot) {
  if (!robot.t || robot.t.length === 0) return [];
  const container = $('robot-plots');
  $('robot-title').style.display = '';
  const t = robot.t;
  const out = [];
  const joints = robot.joints || [];
  const short = (name) => name.replace(/_joint$/, '');
  if (joints.length) {
    out.push(makePlot(container, 'Joint positions', 'q of every 1-dof joint (trajectory.csv J.q)', t,
      joints.map((j) => ({ label: short(j.name), data: j.q })), { unit: 'rad or m' }));
    out.push(makePlot(container, 'Joint velocities', 'v of every 1-dof joint (trajectory.csv J.v)', t,
      joints.map((j) => ({ label: short(j.name), data: j.v })), { unit: 'rad/s or m/s' }));
    const actuated = joints.filter((j) => j.tau);
    if (actuated.length)
      out.push(makePlot(container, 'Joint torques', 'force each actuator applied over the step, after its effort limit (J.tau)', t,
        actuated.map((j) => ({ label: short(j.name), data: j.tau })), { unit: 'N m or N' }));
  }
  const forces = (robot.contact_fz || []).filter((f) => f.data.some((x) => x != null && x !== 0));
  if (forces.length)
    out.push(makePlot(container, 'Contact forces', 'net vertical contact force on each of the robot\u2019s bodies that touches something (B.contact_fz, world z)', t,
      forces.slice(0, 12).map((f) => ({ label: f.name, data: f.data })), { unit: 'N' }));
  for (const b of robot.bases || []) {
    out.push(makePlot(container, `Base height (${b.name})`, 'height of the floating base\u2019s origin', t,
      [{ label: 'z [m]', data: b.z }], { unit: 'm' }));
    out.push(makePlot(container, `Base orientation (${b.name})`, 'roll, pitch, yaw of the floating base (R = Rz Ry Rx)', t,
      [{ label: 'roll', data: b.roll }, { label: 'pitch', data: b.pitch }, { label: 'yaw', data: b.yaw }], { unit: 'rad' }));
  }
  window.coulombReport.numRobotPlots = out.length;
  return out;
}

function main() {
  const data = JSON.parse($('coulomb-report-data').textContent);
  if (data.format !== 'coulomb-report') throw new Error('no report data in this file');
  const st = data.stats || {};
  const steps = data.steps;
  document.title = `coulomb report: ${data.title}`;
  $('title').textContent = `coulomb report: ${data.title}`;
  const sub = $('subtitle');
  sub.textContent = `${fmt(steps.rows)} steps from steps.csv, summary from stats.json. `;
  if (data.replay) {
    const a = document.createElement('a');
    a.href = data.replay; a.textContent = 'Open the 3-D replay';
    sub.append(a);
  }
  summary(st);
  if (steps.decimated_to)
    $('decimation').textContent = `steps.csv has ${fmt(steps.rows)} rows; the plots show ${fmt(steps.t.length)} points, ` +
      'each the largest value over a run of consecutive steps (energy: the last value).';
  const statusText = Object.entries(steps.status_counts || {}).map(([k, v]) => `${k}: ${fmt(v)}`).join(', ');
  if (statusText) {
    const note = document.createElement('div');
    note.className = 'note';
    note.textContent = `SAP status per step: ${statusText}` +
      (steps.failure_times.length ? `; first failures at t = ${steps.failure_times.slice(0, 8).map((x) => fmt(x)).join(', ')} s` : '');
    $('decimation').after(note);
  }

  const t = steps.t;
  const positive = (a) => a.map((x) => (x > 0 ? x : null));
  const scale = (a, k) => a.map((x) => (x == null ? null : k * x));
  const plots = $('plots');
  const dtMs = 1e3 * (st.time_step_s || 0);
  const charts = [
    makePlot(plots, 'SAP iterations per step', 'Newton iterations of the SAP solve and line-search iterations summed over them',
      t, [{ label: 'Newton', data: steps.solver_iterations }, { label: 'line search', data: steps.line_search_iterations }],
      { unit: 'iterations' }),
    makePlot(plots, 'Contacts', 'contact points at the start of each step', t,
      [{ label: 'contacts', data: steps.contacts }], { unit: 'contacts' }),
    makePlot(plots, 'Momentum error', 'SAP\u2019s relative momentum residual e_m at the end of each solve (log scale)', t,
      [{ label: 'e_m', data: positive(steps.momentum_error) }], { log: true }),
    makePlot(plots, 'Max penetration', 'deepest overlap −min φ over the step\u2019s contacts', t,
      [{ label: 'penetration [mm]', data: scale(steps.max_penetration_m, 1e3) }], { unit: 'mm' }),
    makePlot(plots, 'Energy', 'kinetic + gravitational + joint-spring energy at the end of each step', t,
      [{ label: 'energy [J]', data: steps.energy_J }], { unit: 'J' }),
    makePlot(plots, 'Wall time per step', 'time spent computing each step; below the time step runs faster than real time', t,
      [{ label: 'wall time [ms]', data: scale(steps.wall_time_s, 1e3) },
        ...(dtMs > 0 ? [{ label: 'time step [ms]', data: t.map(() => dtMs), color: '#888', dash: [5, 4] }] : [])],
      { unit: 'ms' }),
    ...(steps.extra || []).map((e) => makePlot(plots, e.name, `steps.csv column ${e.name}`, t,
      [{ label: e.name, data: e.data }])),
  ];
  charts.push(...robotPlots(data.robot || {}));
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const c of charts) c.setSize({ width: Math.max(300, c.root.parentElement.clientWidth - 20), height: 230 });
    }, 100);
  });
  window.coulombReport.numPlots = charts.length;
  window.coulombReport.numPoints = t.length;
  window.coulombReport.ready = true;
}

window.coulombReport = { ready: false, linearTicks };
try {
  main();
} catch (e) {
  window.coulombReport.error = String(e && e.message ? e.message : e);
  $('error').textContent = 'report.html could not be shown: ' + window.coulombReport.error;
  $('error').style.display = 'block';
  console.error(e);
}
