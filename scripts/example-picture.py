#!/usr/bin/env python3
"""Makes docs/example-foreground.png: one frame of the built-in example
sequence (cs-makeseq, as scripts/quickstart.sh makes it) through cudastereo
after the background model's warm-up, as three panels side by side: the
left view, the false-colour disparity of the whole frame (turbo, black =
invalid) and the foreground mask of the background model (white =
foreground; with background=true only those pixels are matched).

    scripts/example-picture.py [--build build] [--out docs/example-foreground.png]

Needs a build (scripts/deps.sh makes one) and GStreamer's command-line tools;
nothing beyond Python's standard library. The element runs on the CPU
backend, so the picture is the same on every machine.
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
import zlib

# The quickstart's example: 640x360 views, 90 frames, 64 disparities; the
# model learns for 30 frames (the default warm-up), then tests. The last
# frame: the wall the object uncovered has been learnt again by then.
VIEW_W, VIEW_H = 640, 360
FRAMES = 90
SHOWN = FRAMES - 1
WARMUP = 30
GAP = 4  # pixels of grey between panels


def run(cmd, env=None):
    result = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + result.stdout)


def frame_of(path, index, width, height):
    """Frame `index` of a file of raw RGBA frames."""
    size = width * height * 4
    with open(path, "rb") as f:
        f.seek(index * size)
        data = f.read(size)
    if len(data) != size:
        sys.exit(f"{path}: no frame {index}")
    return data


def half_size(rgba, width, height):
    """2x2 averages of an RGB(A) picture, as rows of RGB bytes: keeps the
    PNG small (the example's texture is noise, which does not compress)."""
    rows = []
    for y in range(0, height - 1, 2):
        a = y * width * 4
        b = a + width * 4
        row = bytearray()
        for x in range(0, width - 1, 2):
            i, j = a + 4 * x, b + 4 * x
            for c in range(3):
                row.append((rgba[i + c] + rgba[i + 4 + c] + rgba[j + c] + rgba[j + 4 + c] + 2) // 4)
        rows.append(row)
    return rows


def mask_rows(rgba, width, height):
    """The alpha channel (alpha-mask=true: 255 on the foreground) as grey
    RGB rows, at half size like the others."""
    grey = bytearray(width * height * 4)
    grey[0::4] = grey[1::4] = grey[2::4] = rgba[3::4]
    return half_size(grey, width, height)


def write_png(path, rows):
    """An 8-bit RGB PNG of equally long rows (filter 'none' per row)."""
    width, height = len(rows[0]) // 3, len(rows)
    raw = b"".join(b"\x00" + bytes(r) for r in rows)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(png)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--out", default=os.path.join(root, "docs", "example-foreground.png"))
    args = ap.parse_args()

    env = dict(os.environ, GST_PLUGIN_PATH_1_0=os.path.join(args.build, "gst"))
    with tempfile.TemporaryDirectory() as work:
        seq = os.path.join(work, "example")
        run([os.path.join(args.build, "tools", "cs-makeseq"), "--width", str(VIEW_W), "--height", str(VIEW_H),
             "--frames", str(FRAMES), "--layout", "side-by-side", "--out", seq])
        disparity = os.path.join(work, "disparity.rgba")
        masked = os.path.join(work, "masked.rgba")
        left = os.path.join(work, "left.rgba")
        stereo = ["cudastereo", "backend=cpu", "input-layout=side-by-side", "max-disparity=64", "colormap=turbo"]
        rgba_to = ["videoconvert", "!", "video/x-raw,format=RGBA", "!", "filesink"]
        # One pass over the sequence: the whole frame matched; the background
        # model (alpha = its foreground mask); the left half of each frame.
        run(["gst-launch-1.0", "-q", "multifilesrc", f"location={seq}/sbs_%04d.png", f"stop-index={FRAMES - 1}",
             "caps=image/png,framerate=30/1", "!", "pngdec", "!", "videoconvert", "!", "tee", "name=t",
             "t.", "!", "queue", "!", *stereo, "!", "video/x-raw,format=RGBA", "!", "filesink", f"location={disparity}",
             "t.", "!", "queue", "!", *stereo, "background=true", f"warmup-frames={WARMUP}", "alpha-mask=true", "!",
             "video/x-raw,format=RGBA", "!", "filesink", f"location={masked}",
             "t.", "!", "queue", "!", "videocrop", f"right={VIEW_W}", "!", *rgba_to, f"location={left}"], env=env)
        panels = [half_size(frame_of(left, SHOWN, VIEW_W, VIEW_H), VIEW_W, VIEW_H),
                  half_size(frame_of(disparity, SHOWN, VIEW_W, VIEW_H), VIEW_W, VIEW_H),
                  mask_rows(frame_of(masked, SHOWN, VIEW_W, VIEW_H), VIEW_W, VIEW_H)]
        gap = bytearray([128] * 3 * GAP)
        rows = [gap.join(p[y] for p in panels) for y in range(len(panels[0]))]
        write_png(args.out, rows)
    print(f"wrote {args.out}: frame {SHOWN} of the example (warm-up {WARMUP} frames): "
          "left view, disparity, foreground mask")


if __name__ == "__main__":
    main()
