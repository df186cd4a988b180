#!/usr/bin/env bash
# Renders packaging/icons/batchscope.svg to the PNG sizes the hicolor theme uses and to the
# Windows .ico (PNG-compressed entries, 16 to 256 pixels). The results are committed: run this
# again after changing the SVG. Needs rsvg-convert (Debian's librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/../packaging/icons"
for n in 16 24 32 48 64 128 256 512; do
    mkdir -p "${n}x${n}"
    rsvg-convert -w "$n" -h "$n" batchscope.svg -o "${n}x${n}/batchscope.png"
done
python3 - <<'PY'
import struct

sizes = [16, 24, 32, 48, 64, 128, 256]
images = [open(f"{n}x{n}/batchscope.png", "rb").read() for n in sizes]
offset = 6 + 16 * len(sizes)
entries, data = b"", b""
for n, image in zip(sizes, images):
    # Width and height 0 mean 256; one plane, 32 bits a pixel.
    entries += struct.pack("<BBBBHHII", n % 256, n % 256, 0, 0, 1, 32, len(image), offset + len(data))
    data += image
with open("batchscope.ico", "wb") as f:
    f.write(struct.pack("<HHH", 0, 1, len(sizes)) + entries + data)
PY
echo "packaging/icons: $(ls -d */ | tr -d / | tr '\n' ' ')batchscope.ico"
