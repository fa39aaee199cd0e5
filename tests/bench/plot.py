#!/usr/bin/env python3
"""plot.py: provisioning time against the number of VMs, vmop and its floor, as a PNG.

    tests/bench/plot.py RESULTS.json... OUT.png

Each RESULTS.json is what side_by_side.sh writes (BENCH_OUT): n and the medians of vmop and the floor.
Plots the median create time (apply -> every VM PoweredOn with an IP) of both against n, with the ratio
vmop/floor at each point. Several files with the same n: the median of their medians. Python standard
library only (zlib + struct for the PNG, a built-in 5x7 bitmap font); test infrastructure, never shipped.
"""
import json
import statistics
import struct
import sys
import zlib

# 5x7 glyphs, one string of 7 rows of 5 columns per character ('#' = ink). Text is drawn upper-case.
FONT = {
    "A": " ### #   ##   #######   ##   ##   #", "B": "#### #   ##   ##### #   ##   ##### ",
    "C": " ### #   ##    #    #    #   # ### ", "D": "#### #   ##   ##   ##   ##   ##### ",
    "E": "######    #    #### #    #    #####", "F": "######    #    #### #    #    #    ",
    "G": " ### #   ##    # ####   ##   # ####", "H": "#   ##   ##   #######   ##   ##   #",
    "I": " ###   #    #    #    #    #   ### ", "J": "  ###   #    #    #    ##   # ###  ",
    "K": "#   ##  # # #  ##   # #  #  # #   #", "L": "#    #    #    #    #    #    #####",
    "M": "#   ### ### # ##   ##   ##   ##   #", "N": "#   ###  ## # ##  ###   ##   ##   #",
    "O": " ### #   ##   ##   ##   ##   # ### ", "P": "#### #   ##   ##### #    #    #    ",
    "Q": " ### #   ##   ##   ## # ##  #  ## #", "R": "#### #   ##   ##### # #  #  # #   #",
    "S": " ####    #     ###     #    #####  ", "T": "#####  #    #    #    #    #    #  ",
    "U": "#   ##   ##   ##   ##   ##   # ### ", "V": "#   ##   ##   ##   ##   # # #   #  ",
    "W": "#   ##   ##   ## # ## # ### ###   #", "X": "#   ##   # # #   #   # # #   ##   #",
    "Y": "#   ##   # # #   #    #    #    #  ", "Z": "#####    #   #   #   #   #    #####",
    "0": " ### #   ##  ### # ###  ##   # ### ", "1": "  #   ##    #    #    #    #   ### ",
    "2": " ### #   #    #   #   #   #   #####", "3": "#####   #   #     #     ##   # ### ",
    "4": "   #   ##  # # #  # #####   #    # ", "5": "######    ####     #    ##   # ### ",
    "6": "  ##  #   #    #### #   ##   # ### ", "7": "#####    #   #   #   #    #    #   ",
    "8": " ### #   ##   # ### #   ##   # ### ", "9": " ### #   ##   # ####    #   #  ##  ",
    ".": "                              ##   ", ",": "                         ##   #  # ",
    "-": "               #####               ", ">": "#     #     #     #   #   #   #    ",
    "(": "  #   #   #    #    #     #     #  ", ")": "  #     #     #    #    #   #   #  ",
    "/": "    #    #   #   #   #   #    #    ", ":": "      ##   ##        ##   ##       ",
    "+": "       #    #  #####  #    #       ", "=": "          #####     #####          ",
    " ": " " * 35,
}
for k, v in list(FONT.items()):
    FONT[k] = v.ljust(35)[:35]

WHITE, BLACK, GREY, LIGHT = (255, 255, 255), (0, 0, 0), (110, 110, 110), (225, 225, 225)
VMOP, FLOOR = (200, 40, 40), (30, 90, 200)


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(WHITE * (w * h))

    def set(self, x, y, c):
        if 0 <= x < self.w and 0 <= y < self.h:
            i = (y * self.w + x) * 3
            self.px[i:i + 3] = bytes(c)

    def rect(self, x0, y0, x1, y1, c):
        for y in range(min(y0, y1), max(y0, y1) + 1):
            for x in range(min(x0, x1), max(x0, x1) + 1):
                self.set(x, y, c)

    def line(self, x0, y0, x1, y1, c, width=1):
        x0, y0, x1, y1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
        err, r = dx + dy, width // 2
        while True:
            self.rect(x0 - r, y0 - r, x0 + width - 1 - r, y0 + width - 1 - r, c)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, x, y, s, c=BLACK, scale=2, anchor="left"):
        s = s.upper()
        w = len(s) * 6 * scale - scale
        if anchor == "center":
            x -= w // 2
        elif anchor == "right":
            x -= w
        for ch in s:
            g = FONT.get(ch, FONT[" "])
            for row in range(7):
                for col in range(5):
                    if g[row * 5 + col] == "#":
                        self.rect(x + col * scale, y + row * scale, x + col * scale + scale - 1,
                                  y + row * scale + scale - 1, c)
            x += 6 * scale
        return w

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            f.write(chunk(b"IEND", b""))


def nice_step(span, ticks=5):
    if span <= 0:
        return 1
    raw = span / ticks
    mag = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 10 ** -len(str(int(1 / raw)))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def fmt(v):
    return ("%d" % v) if abs(v - round(v)) < 1e-9 else ("%g" % round(v, 2))


def load(paths):
    by_n = {}
    for p in paths:
        r = json.load(open(p))
        v, f = (r.get("vmop") or {}).get("create_s"), (r.get("floor") or {}).get("create_s")
        e = by_n.setdefault(int(r["n"]), {"vmop": [], "floor": [], "workers": r.get("workers"),
                                          "creates": r.get("creates"), "runs": 0})
        if isinstance(v, (int, float)):
            e["vmop"].append(v)
        if isinstance(f, (int, float)):
            e["floor"].append(f)
        e["runs"] += r.get("runs", 0)
    pts = []
    for n in sorted(by_n):
        e = by_n[n]
        pts.append((n, statistics.median(e["vmop"]) if e["vmop"] else None,
                    statistics.median(e["floor"]) if e["floor"] else None, e["workers"], e["runs"],
                    e["creates"]))
    return pts


def plot(pts, out):
    W, H = 900, 600
    L, R, T, B = 110, 40, 70, 90
    c = Canvas(W, H)
    xs = [p[0] for p in pts]
    ys = [y for p in pts for y in (p[1], p[2]) if y is not None]
    xmax = max(xs) if xs else 1
    ymax = max(ys) if ys else 1
    xstep, ystep = nice_step(xmax), nice_step(ymax)
    xtop = xstep * (int(xmax / xstep) + (0 if xmax % xstep == 0 else 1))
    ytop = ystep * (int(ymax * 1.08 / ystep) + 1)

    def X(v):
        return L + (W - L - R) * v / xtop

    def Y(v):
        return H - B - (H - T - B) * v / ytop

    # grid, axes, ticks
    v = 0.0
    while v <= ytop + 1e-9:
        c.line(L, Y(v), W - R, Y(v), LIGHT)
        c.line(L - 6, Y(v), L, Y(v), BLACK)
        c.text(L - 12, int(Y(v)) - 7, fmt(v), GREY, anchor="right")
        v += ystep
    v = 0.0
    while v <= xtop + 1e-9:
        c.line(X(v), H - B, X(v), H - B + 6, BLACK)
        c.text(int(X(v)), H - B + 14, fmt(v), GREY, anchor="center")
        v += xstep
    c.line(L, T, L, H - B, BLACK, 2)
    c.line(L, H - B, W - R, H - B, BLACK, 2)
    workers = sorted({p[3] for p in pts if p[3]})
    creates = sorted({p[5] for p in pts if p[5]})  # side_by_side.sh's JSON since the floor's -c is them
    c.text(W // 2, 18, "provisioning time vs number of VMs", BLACK, anchor="center")
    c.text(W // 2, 44, "apply -> all PoweredOn + IP, median, %s workers%s" % (
        "/".join(map(str, workers)),
        ", %s creates at once" % "/".join(map(str, creates)) if creates else ""),
           GREY, scale=1, anchor="center")
    c.text((L + W - R) // 2, H - 40, "VMs", BLACK, anchor="center")
    c.text(14, T - 30, "seconds", BLACK)

    # the two polylines with point marks; the ratio above each vmop point
    for idx, colour in ((1, VMOP), (2, FLOOR)):
        prev = None
        for p in pts:
            if p[idx] is None:
                prev = None
                continue
            cur = (X(p[0]), Y(p[idx]))
            if prev:
                c.line(prev[0], prev[1], cur[0], cur[1], colour, 3)
            prev = cur
        for p in pts:
            if p[idx] is not None:
                x, y = int(X(p[0])), int(Y(p[idx]))
                c.rect(x - 4, y - 4, x + 4, y + 4, colour)
    for n, v, f, _, _, _ in pts:
        if v is not None and f:
            c.text(int(X(n)), int(Y(v)) - 24, "x%.2f" % (v / f), VMOP, anchor="center")

    # legend
    lx, ly = L + 24, T + 10
    c.rect(lx, ly + 5, lx + 30, ly + 8, VMOP)
    c.text(lx + 40, ly, "vmop", BLACK)
    c.rect(lx, ly + 29, lx + 30, ly + 32, FLOOR)
    c.text(lx + 40, ly + 24, "floor (govmomi)", BLACK)
    c.text(lx + 40, ly + 48, "xR = vmop / floor", GREY, scale=1)
    c.png(out)


def main(argv):
    if len(argv) < 3 or not argv[-1].endswith(".png"):
        sys.stderr.write("usage: plot.py RESULTS.json... OUT.png\n")
        return 2
    pts = load(argv[1:-1])
    if not pts:
        sys.stderr.write("plot.py: no results\n")
        return 1
    plot(pts, argv[-1])
    for n, v, f, w, runs, _ in pts:
        print("n=%d: vmop %s s, floor %s s%s" % (n, v, f, (", ratio %.2f" % (v / f)) if v and f else ""))
    print("wrote %s" % argv[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
