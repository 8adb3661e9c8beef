"""Exit 0 when a PNG screenshot shows something: enough distinct colours and non-white pixels.

Each further argument RRGGBB:N asks for at least N pixels of that colour (each channel within 6): a
mark drawn in its own colour is on the screen."""
import struct, sys, zlib

def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), "unexpected PNG format"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows

w, h, bpp, rows = pixels(sys.argv[1])
colours, ink = set(), 0
for row in rows[::4]:
    for x in range(0, w * bpp, bpp * 4):
        px = row[x:x + 3]
        colours.add(px)
        ink += px != b"\xff\xff\xff"
sampled = (h // 4) * (w // 4)
print(f"screenshot {w}x{h}: {len(colours)} colours, {100.0 * ink / max(1, sampled):.1f}% non-white")
ok = len(colours) >= 8 and ink > sampled * 0.02
for want in sys.argv[2:]:
    hexa, need = want.split(":")
    rgb = bytes.fromhex(hexa)
    n = sum(1 for row in rows for x in range(0, w * bpp, bpp)
            if all(abs(row[x + c] - rgb[c]) <= 6 for c in range(3)))
    print(f"#{hexa}: {n} pixels (at least {need} wanted)")
    ok &= n >= int(need)
sys.exit(0 if ok else 1)
