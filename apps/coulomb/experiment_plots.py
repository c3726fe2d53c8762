#!/usr/bin/env python3
"""Figures of `coulomb experiment id-tables` (Zapolsky & Drumwright, section 8).

Usage: python3 plots.py DIR

Reads DIR/runs.json, DIR/waypoints.csv and DIR/runs/NAME/series.csv (written by coulomb) and
writes into DIR:
  fig14_joint_position_error.png  mean joint position error over time, per planar terrain
  fig15_torque_rate.png           torque rate |dtau|/dt over time (log scale), per planar terrain
  fig16_heightmap.png             joint position error over time on the height map
  fig17_base_path.png             base path in the plane on the rigid high-friction terrain
  fig18_arm.png                   the Panda's joint position error, box friction 1e6 and 1
Needs matplotlib (apt install python3-matplotlib). Figures without data are skipped.
"""
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PLANAR = [("rigid-low", "Rigid, low friction"), ("rigid-high", "Rigid, high friction"),
          ("compliant-low", "Compliant, low friction"), ("compliant-high", "Compliant, high friction")]


def read_series(path):
    columns = {}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        for name in header:
            columns[name] = []
        for row in reader:
            for name, value in zip(header, row):
                columns[name].append(float(value) if value != "" else math.nan)
    return columns


def smooth(values, window):
    """Moving mean over `window` samples, ignoring NaN."""
    out, total, count, queue = [], 0.0, 0, []
    for v in values:
        queue.append(v)
        if not math.isnan(v):
            total += v
            count += 1
        if len(queue) > window:
            old = queue.pop(0)
            if not math.isnan(old):
                total -= old
                count -= 1
        out.append(total / count if count else math.nan)
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    with open(os.path.join(root, "runs.json")) as f:
        runs = [r for r in json.load(f) if r.get("done")]
    series = {}
    for r in runs:
        path = os.path.join(root, "runs", r["name"], "series.csv")
        if os.path.exists(path):
            series[r["name"]] = read_series(path)
    written = []

    def runs_of(group, terrain):
        return [r for r in runs if r["group"] == group and r["terrain"] == terrain and r["name"] in series]

    def per_terrain_figure(name, column, ylabel, log, window):
        if not any(runs_of("planar", t) for t, _ in PLANAR):
            return
        fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True)
        for ax, (terrain, title) in zip(axes.flat, PLANAR):
            for r in runs_of("planar", terrain):
                s = series[r["name"]]
                y = smooth(s[column], window) if window > 1 else s[column]
                ax.plot(s["t"], y, label=r["label"] + (" (fell)" if r["fell"] else ""), linewidth=0.9)
            ax.set_title(title)
            ax.set_xlabel("t [s]")
            ax.set_ylabel(ylabel)
            if log:
                ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(root, name), dpi=120)
        plt.close(fig)
        written.append(name)

    # Fig. 14: mean joint position error over time (0.5 s moving mean of the 100 Hz series).
    per_terrain_figure("fig14_joint_position_error.png", "joint_position_error", "E|θ − θ_des| [rad]", False, 50)
    # Fig. 15: torque rate (largest per 10 ms bucket).
    per_terrain_figure("fig15_torque_rate.png", "torque_rate", "E|Δτ|/δt [N·m/s]", True, 1)

    # Fig. 16: height map.
    hm = runs_of("heightmap", "heightmap")
    if hm:
        fig, ax = plt.subplots(figsize=(9, 5))
        for r in hm:
            s = series[r["name"]]
            ax.plot(s["t"], smooth(s["joint_position_error"], 50), label=r["label"] + (" (fell)" if r["fell"] else ""))
        ax.set_title("Rigid height map, random friction")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("E|θ − θ_des| [rad]")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(root, "fig16_heightmap.png"), dpi=120)
        plt.close(fig)
        written.append("fig16_heightmap.png")

    # Fig. 17: base path on the rigid high-friction terrain, with the waypoints.
    rh = runs_of("planar", "rigid-high")
    if rh:
        fig, ax = plt.subplots(figsize=(7, 7))
        for r in rh:
            s = series[r["name"]]
            ax.plot(s["base_x"], s["base_y"], label=r["label"] + (" (fell)" if r["fell"] else ""), linewidth=0.9)
        wp = os.path.join(root, "waypoints.csv")
        if os.path.exists(wp):
            w = read_series(wp)
            ax.plot(w["x"], w["y"], "k*", markersize=12, label="waypoints")
        ax.set_title("Base path, rigid terrain, high friction")
        ax.set_xlabel("x [m]")
        ax.set_ylabel("y [m]")
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(root, "fig17_base_path.png"), dpi=120)
        plt.close(fig)
        written.append("fig17_base_path.png")

    # Fig. 18: the arm.
    arm = [("mu-1e6", "Box friction μ = 1e6"), ("mu-1", "Box friction μ = 1")]
    if any(runs_of("arm", m) for m, _ in arm):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
        for ax, (mu, title) in zip(axes, arm):
            for r in runs_of("arm", mu):
                s = series[r["name"]]
                line, = ax.plot(s["t"], smooth(s["joint_position_error"], 5), label=r["label"])
                if r.get("box_dropped"):
                    with open(os.path.join(root, "runs", r["name"], "metrics.json")) as f:
                        t_drop = json.load(f).get("box_drop_time")
                    if t_drop is not None:
                        ax.axvline(t_drop, color=line.get_color(), linestyle="--", linewidth=0.8)
            ax.set_title(title + " (dashed: box dropped)")
            ax.set_xlabel("t [s]")
            ax.set_ylabel("E|θ − θ_des| [rad]")
            ax.grid(True, alpha=0.3)
            ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(root, "fig18_arm.png"), dpi=120)
        plt.close(fig)
        written.append("fig18_arm.png")

    print("wrote " + ", ".join(os.path.join(root, w) for w in written) if written else "no figures: no finished runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
