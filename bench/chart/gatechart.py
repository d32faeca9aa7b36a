"""Draws BENCHMARKS.md's GraphQL subscription chart from gatebench's tables.

    go run ./cmd/gatebench -runs 3 > run.txt
    python3 chart/gatechart.py run.txt ../docs/gatebench.svg

or from a results file (bench/results-gatebench-*.txt).

Per client count, for evgate ("evloop") and the goroutine-per-subscription
baseline: goroutines, heap in use (as read at rest, and after two
collections) and resident memory per connection, and the latency until the
last subscriber of an event has it (p50 and p99) at each event rate.
Needs matplotlib (pip install matplotlib).
"""

import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERVERS = ["evloop", "baseline"]


def parse(path):
    """Returns {clients: {"rest": {server: row}, "latency": {(rate, server): row}}}."""
    out = {}
    clients = kind = header = None
    for line in open(path):
        line = line.strip()
        m = re.match(r"### (\d+) clients(.*)", line)
        if m:
            clients = int(m.group(1))
            kind = "rest" if "at rest" in m.group(2) else "latency"
            out.setdefault(clients, {"rest": {}, "latency": {}})
            header = None
            continue
        if clients is None or not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            # A name that repeats (the second "p99 ms") gets " (2)".
            header = [c if c not in cells[:i] else f"{c} (2)" for i, c in enumerate(cells)]
            continue
        row = dict(zip(header, cells))
        if row["server"] not in SERVERS:
            continue
        # A file may hold several runs (gatebench's output appended): the
        # first table of a kind wins.
        if kind == "rest":
            out[clients]["rest"].setdefault(row["server"], row)
        else:
            out[clients]["latency"].setdefault((row["rate"], row["server"]), row)
    return out


def bars(ax, groups, values, labels, ylabel, title, log=False, hatches=None):
    """values[i][j]: group i, series j."""
    n = len(labels)
    width = 0.8 / n
    for j, label in enumerate(labels):
        xs = [i + j * width for i in range(len(groups))]
        ys = [v[j] for v in values]
        ax.bar(xs, ys, width, label=label, color=f"C{j % 2}", hatch=(hatches or [None] * n)[j],
               edgecolor="white" if not hatches else "black", linewidth=0.5)
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.3g}", (x, y), ha="center", va="bottom", fontsize=7)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))])
    ax.set_xticklabels(groups, fontsize=8)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


def main(src, dst):
    data = parse(src)
    counts = sorted(data)
    groups = [f"{n:,} clients" for n in counts]
    fig, axes = plt.subplots(1, 4, figsize=(18, 5))

    vals = [[float(data[n]["rest"][s]["goroutines"]) / n for s in SERVERS] for n in counts]
    bars(axes[0], groups, vals, SERVERS, "goroutines per connection (log)", "Goroutines at rest", log=True)

    vals = [[float(data[n]["rest"][s][col]) for s in SERVERS for col in ("heap KiB/conn", "after 2 GCs KiB/conn")]
            for n in counts]
    labels = [f"{s}, {w}" for s in SERVERS for w in ("as read", "after 2 GCs")]
    bars(axes[1], groups, vals, labels, "heap in use, KiB per connection", "Heap at rest",
         hatches=[None, "//", None, "//"])
    # colour by server, hatch by reading
    for k, patch_group in enumerate(axes[1].containers):
        for p in patch_group:
            p.set_facecolor(f"C{k // 2}")
    axes[1].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2)

    vals = [[float(data[n]["rest"][s]["resident KiB/conn"]) for s in SERVERS] for n in counts]
    bars(axes[2], groups, vals, SERVERS, "resident KiB per connection", "Resident memory at rest")

    lat_groups, lat_vals = [], []
    for n in counts:
        rates = sorted({rate for rate, _ in data[n]["latency"]}, key=lambda r: int(r.split("/")[0]))
        for rate in rates:
            lat_groups.append(f"{n // 1000}k @ {rate}")
            row = [data[n]["latency"][(rate, s)] for s in SERVERS]
            lat_vals.append([float(r["last of an event's subscribers p50 ms"]) for r in row] +
                            [float(r["p99 ms"]) for r in row])
    labels = [f"{s} p50" for s in SERVERS] + [f"{s} p99" for s in SERVERS]
    bars(axes[3], lat_groups, lat_vals, labels, "ms, publish to the last subscriber (log)",
         "Latency per event", log=True, hatches=[None, None, "//", "//"])
    for k, patch_group in enumerate(axes[3].containers):
        for p in patch_group:
            p.set_facecolor(f"C{k % 2}")
    axes[3].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    for tick in axes[3].get_xticklabels():
        tick.set_rotation(15)

    fig.suptitle("GraphQL subscriptions, 10 triggers: evgate (evloop) against a goroutine-per-subscription gateway "
                 "(medians; lower is better)", fontsize=11)
    fig.tight_layout()
    fig.savefig(dst)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
