#!/usr/bin/env python3
"""Draws examples/street.png, the picture the quick start segments (a simple street scene:
sky, road, a yellow bus and red cars). Standard library only; rerun to regenerate."""
import os
import struct
import zlib

W, H = 640, 400


def scene():
    px = [[(0, 0, 0)] * W for _ in range(H)]
    for y in range(H):
        for x in range(W):
            if y < 170:
                px[y][x] = (120 + y // 4, 170 + y // 6, 235)            # sky
            elif y < 200:
                px[y][x] = (70, 140, 60)                                # grass verge
            else:
                px[y][x] = (90, 90, 95)                                 # road
                if 290 < y < 300 and (x // 40) % 2 == 0:
                    px[y][x] = (235, 235, 235)                          # lane marking

    def rect(x0, y0, x1, y1, colour):
        for y in range(y0, y1):
            for x in range(x0, x1):
                px[y][x] = colour

    rect(80, 150, 330, 270, (245, 195, 20))                            # bus body
    for wx in range(95, 320, 45):
        rect(wx, 165, wx + 32, 200, (40, 60, 80))                       # bus windows
    for cx in (120, 290):
        rect(cx - 18, 262, cx + 18, 285, (20, 20, 20))                  # bus wheels
    for x0, y0 in ((400, 240), (520, 310)):
        rect(x0, y0, x0 + 90, y0 + 40, (200, 30, 35))                   # car body
        rect(x0 + 15, y0 - 20, x0 + 70, y0, (200, 30, 35))              # car roof
        rect(x0 + 22, y0 - 15, x0 + 63, y0 - 2, (40, 60, 80))           # car window
    return px


def write_png(path, px):
    raw = b"".join(b"\x00" + bytes(c for p in row for c in p) for row in px)

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    write_png(os.path.join(os.path.dirname(os.path.abspath(__file__)), "street.png"), scene())
