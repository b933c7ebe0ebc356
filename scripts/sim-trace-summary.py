#!/usr/bin/env python3
"""Where a persistent simulation's commands spend their time, from the trace
rk_sim_destroy writes to $RK_SIM_TRACE_FILE when the kernels were compiled
with RK_SIM_TRACE=1 (src/sim/device/sim_protocol.h says what each stamp is):

  RK_SIM_DEFINES=RK_SIM_TRACE=1 RK_SIM_TRACE_FILE=/tmp/trace.txt \\
      rk bench seed-table --backend cuda
  scripts/sim-trace-summary.py /tmp/trace.txt

The trace keeps the last 1024 commands of each simulation (the seed table's:
its mixed workload with queries waited, then the batch of steps). Prints the
median and 90th percentile of each stage per kind of command, in
microseconds, and, for the commands that follow an answered one, how long
the next command took to reach the relay after that answer (the host's turn
and the bus)."""
import statistics
import sys

STAGES = [("bus read", "issue", "found"), ("to deciding", "found", "applier"), ("to the log", "found", "logged"),
          ("log to band (or the relay's block)", "logged", "band"), ("band to answer", "band", "answer"),
          ("found to answer", "found", "answer"), ("answer to the relay seeing its mark", "answer", "mark_seen"),
          ("found to the relay's next read back", "found", "read_back"),
          # a step's way through band RK_SIM_TRACE_BAND (its stamps hold it up: sim_protocol.h)
          ("log to the traced band's read", "logged", "b_read"), ("band's read to its rows", "b_read", "b_ready"),
          ("its rows", "b_ready", "b_stepped"), ("its release", "b_stepped", "b_said"),
          ("stepped to counted in", "b_stepped", "b_gathered")]


def kind(op):
    if op & 0x40000000:
        return f"id {op & 0xffff} by the relay's block"
    if op == 0x10000:
        return "step"
    if op > 0x10000:
        return f"library op {op:#x}"
    return f"id {op} by the bands"


def quantiles(values):
    values = sorted(values)
    return statistics.median(values), values[min(len(values) - 1, int(0.9 * len(values)))]


def signed32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def early_answers(cmds):
    """Queries a band answered at its read: their DECIDING word is packed
    (sim_protocol.h): when the band began to poll for it (low 32 bits of the
    clock), 8-ns units since its batch before was found, and whether its
    neighbours were past the step before."""
    polled, gaps, near = [], [], 0
    for c in cmds:
        d = c["deciding"]
        if c["op"] & 0x40000000 or c["op"] >= 0x10000 or not d or (d >> 32) == (c["logged"] >> 32):
            continue  # the applier's stamp is a whole clock value
        polled.append(signed32((d >> 32) - c["logged"]) / 1000)
        gaps.append(((d >> 16) & 0xFFFF) * 8 / 1000)
        near += d & 1
    if polled:
        p50, p90 = quantiles(polled)
        g50, g90 = quantiles(gaps)
        print(f"    answered at the band's read, n={len(polled)}: the band's poll began {p50:.2f} ({p90:.2f}) us "
              f"after the relay's copy; {g50:.2f} ({g90:.2f}) us after it found its batch before; "
              f"neighbours past the step before: {near}")


def main(path):
    runs, current = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                current = {}
                runs.append((line.strip(), current))
                continue
            v = [int(x) for x in line.split()] + [0] * 8  # older traces have 7 to 10 columns
            seq, op, issue, found, logged, band, answer, deciding, mark_seen, read_back = v[:10]
            current[seq] = dict(op=op, issue=issue, found=found, logged=logged, band=band, answer=answer,
                                deciding=deciding, mark_seen=mark_seen, read_back=read_back,
                                applier=deciding if op & 0x40000000 else 0)
            current[seq].update(zip(("b_read", "b_ready", "b_stepped", "b_said", "b_gathered"), v[10:15]))
    for title, cmds in runs:
        print(title, f"({len(cmds)} commands)")
        by_kind = {}
        for seq, c in cmds.items():
            by_kind.setdefault(kind(c["op"]), []).append(c)
        for k, cs in sorted(by_kind.items()):
            cells = []
            for name, a, b in STAGES:
                d = [(c[b] - c[a]) / 1000 for c in cs if c[a] and c[b] and c[b] >= c[a]]
                if d:
                    p50, p90 = quantiles(d)
                    cells.append(f"{name} {p50:.2f} ({p90:.2f})")
            print(f"  {k:<28} n={len(cs):<5} " + "; ".join(cells))
            early_answers(cs)
        turn, issued = [], []
        for seq, c in cmds.items():
            nxt = cmds.get(seq + 1)
            if nxt and c["answer"] and nxt["found"] and nxt["found"] > c["answer"]:
                turn.append((nxt["found"] - c["answer"]) / 1000)
                if nxt["issue"] and nxt["issue"] > c["answer"]:
                    issued.append((nxt["issue"] - c["answer"]) / 1000)
        if turn:
            p50, p90 = quantiles(turn)
            print(f"  answer -> the next command found by the relay (only where it came after): "
                  f"{p50:.2f} ({p90:.2f}) us, n={len(turn)}")
        if issued:
            p50, p90 = quantiles(issued)
            print(f"  answer -> the relay's read that found the next one issued: {p50:.2f} ({p90:.2f}) us, n={len(issued)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: sim-trace-summary.py TRACE_FILE")
    main(sys.argv[1])
