# Renders icon.svg's shapes to icon.png (the package icon) with the standard library only: python3 eng/icon.py
import struct, zlib, os

SIZE, SS = 128, 4  # pixels, supersamples per axis
SHAPES = [  # (x, y, w, h, radius, rgb), drawn in order, as in icon.svg
    (0, 0, 128, 128, 20, (0x1b, 0x2a, 0x41)),
    (20, 22, 88, 20, 6, (0xf2, 0x8c, 0x28)),
    (20, 54, 66, 20, 6, (0x3b, 0x7d, 0xd8)),
    (20, 86, 44, 20, 6, (0x9a, 0xa5, 0xb1)),
]

def inside(px, py, x, y, w, h, r):
    if not (x <= px <= x + w and y <= py <= y + h):
        return False
    cx = min(max(px, x + r), x + w - r)
    cy = min(max(py, y + r), y + h - r)
    return (px - cx) ** 2 + (py - cy) ** 2 <= r * r

rows = []
for j in range(SIZE):
    row = bytearray([0])  # filter: none
    for i in range(SIZE):
        acc = [0.0, 0.0, 0.0, 0.0]
        for sj in range(SS):
            for si in range(SS):
                px, py = i + (si + 0.5) / SS, j + (sj + 0.5) / SS
                color = None
                for (x, y, w, h, r, rgb) in SHAPES:
                    if inside(px, py, x, y, w, h, r):
                        color = rgb
                if color:
                    acc[0] += color[0]; acc[1] += color[1]; acc[2] += color[2]; acc[3] += 255
        n = SS * SS
        alpha = acc[3] / n
        if alpha:
            row += bytes([round(acc[0] / (acc[3] / 255)), round(acc[1] / (acc[3] / 255)), round(acc[2] / (acc[3] / 255)), round(alpha)])
        else:
            row += bytes([0, 0, 0, 0])
    rows.append(bytes(row))

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)

png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "icon.png"), "wb") as f:
    f.write(png)
