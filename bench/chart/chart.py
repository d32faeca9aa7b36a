"""Draws BENCHMARKS.md's chart from a harness table.

    go run ./cmd/harness ... > run.txt
    python3 chart/chart.py run.txt ../docs/bench.png

It reads the markdown table the harness prints and draws, per
implementation, the efficiency (thousand messages per second of server CPU)
of each echo scenario, and the resident memory per idle connection.
Needs matplotlib (pip install matplotlib).
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def parse(path):
    rows = []
    header = None
    for line in open(path):
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        rows.append(dict(zip(header, cells)))
    return rows


def num(s):
    try:
        return float(s)
    except ValueError:
        return None


def main(src, dst):
    rows = parse(src)
    impls = []
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    echo = [s for s in dict.fromkeys(r["scenario"] for r in rows) if not s.startswith("idle")]
    idle = [s for s in dict.fromkeys(r["scenario"] for r in rows) if s.startswith("idle")]
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5), gridspec_kw={"width_ratios": [3, 1.2]})

    ax = axes[0]
    width = 0.8 / len(impls)
    for i, impl in enumerate(impls):
        vals = []
        for s in echo:
            v = [num(r["k msgs/srv CPU-s"]) for r in rows if r["scenario"] == s and r["impl"] == impl]
            vals.append(v[0] if v and v[0] is not None else 0)
        ax.bar([x + i * width for x in range(len(echo))], vals, width, label=impl)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(echo))])
    ax.set_xticklabels(echo, rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("thousand messages per server CPU-second (log)")
    ax.set_title("Echo efficiency (higher is better)")
    ax.legend(fontsize=8, ncol=4)

    ax = axes[1]
    for j, s in enumerate(idle):
        for i, impl in enumerate(impls):
            v = [num(r["idle KiB/conn"]) for r in rows if r["scenario"] == s and r["impl"] == impl]
            if v and v[0] is not None and impl != "c-epoll":
                ax.bar(j + i * width, v[0], width, color=f"C{i}")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(idle))])
    ax.set_xticklabels(idle, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("resident KiB per idle connection (log)")
    ax.set_title("Idle memory (lower is better)")

    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
