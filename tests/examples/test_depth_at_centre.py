#!/usr/bin/env python3
"""examples/depth_at_centre.py on inputs with known answers (CPU backend).

  test_depth_at_centre.py EXAMPLE CS_MAKESEQ

1. the built-in pair at a constant disparity, raw disparity out: every frame
   prints that disparity and baseline * focal-length / disparity;
2. the same in depth mode (millimetres) at another disparity and an odd size;
3. the built-in example sequence through --source at an odd width (rows
   padded to 4 bytes), against its exact ground truth at the centre, which
   lies on the object (disparity 60): reading rows two bytes short would
   land 120 pixels to the left, on the wall (disparity 16);
4. the custom meta's documented fields, types and values in both modes, on
   a copy of an output buffer.
Exit 77 (skip) when Python lacks gi or numpy.
"""
import os
import re
import subprocess
import sys
import tempfile

try:
    import gi
    import numpy as np

    gi.require_version("Gst", "1.0")
    gi.require_version("GstApp", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstApp, GstVideo  # noqa: F401
except (ImportError, ValueError) as e:
    print(f"SKIP: {sys.executable} lacks {e} (install python3-gi, gir1.2-gst-plugins-base-1.0, python3-numpy)")
    sys.exit(77)

EXAMPLE, MAKESEQ = sys.argv[1], sys.argv[2]
LINE = re.compile(r"^frame (\d+) \(backend (\w+), frame-index (\d+)\): centre \((\d+), (\d+)\): "
                  r"disparity ([0-9.]+) px, depth ([0-9.]+) m$")
failures = []


def run(label, args, frames):
    cmd = [sys.executable, EXAMPLE, "--backend", "cpu", "--frames", str(frames)] + args
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    print(f"== {label}: {' '.join(cmd[1:])}\n{done.stdout}{done.stderr}", end="")
    if done.returncode != 0:
        failures.append(f"{label}: exit status {done.returncode}")
        return []
    rows = [LINE.match(line) for line in done.stdout.splitlines()]
    if len(rows) != frames or not all(rows):
        failures.append(f"{label}: expected {frames} lines of centre disparity and depth")
        return []
    for i, m in enumerate(rows):
        if int(m.group(1)) != i or m.group(2) != "cpu":
            failures.append(f"{label}: line {i} is not frame {i} on the cpu backend")
        if int(m.group(3)) != i + 1:  # the meta counts the frames the engine processed
            failures.append(f"{label}: frame {i} has frame-index {m.group(3)}, expected {i + 1}")
    return [(int(m.group(4)), int(m.group(5)), float(m.group(6)), float(m.group(7))) for m in rows]


def check(label, rows, centre, disparity, depth_m, disparity_tolerance, depth_tolerance):
    for i, (x, y, d, z) in enumerate(rows):
        if (x, y) != centre:
            failures.append(f"{label}: frame {i} centre ({x}, {y}), expected {centre}")
        if abs(d - disparity) > disparity_tolerance:
            failures.append(f"{label}: frame {i} disparity {d}, expected {disparity}")
        if abs(z - depth_m) > depth_tolerance:
            failures.append(f"{label}: frame {i} depth {z} m, expected {depth_m:.3f}")


def ground_truth(png):
    """gt_0000.png (16-bit, d * 16) as an array, read by GStreamer's pngdec."""
    p = Gst.parse_launch(f"filesrc location={png} ! pngdec ! videoconvert ! video/x-raw,format=GRAY16_LE "
                         "! appsink name=sink sync=false")
    p.set_state(Gst.State.PLAYING)
    sample = p.get_by_name("sink").try_pull_sample(30 * Gst.SECOND)
    if sample is None:
        p.set_state(Gst.State.NULL)
        raise RuntimeError(f"cannot read {png}")
    info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
    buf = sample.get_buffer()
    ok, mapped = buf.map(Gst.MapFlags.READ)
    gt = np.ndarray((info.height, info.width), dtype="<u2", buffer=mapped.data, offset=info.offset[0],
                    strides=(info.stride[0], 2)).copy()
    buf.unmap(mapped)
    p.set_state(Gst.State.NULL)
    return gt


baseline, focal = 0.12, 700.0
rows = run("constant disparity 20", ["--disparity", "20", "--baseline", str(baseline), "--focal-length",
                                     str(focal)], 4)
check("constant disparity 20", rows, (160, 120), 20.0, baseline * focal / 20, 0.25, 0.06)

rows = run("depth mode, disparity 11", ["--output-mode", "depth", "--disparity", "11", "--size", "199x101",
                                        "--baseline", "0.3", "--focal-length", "450"], 3)
check("depth mode, disparity 11", rows, (99, 50), 11.0, 0.3 * 450 / 11, 0.1, 0.005)

Gst.init(None)
with tempfile.TemporaryDirectory(prefix="cs-depth-test-") as seq:
    width, height = 321, 241
    subprocess.run([MAKESEQ, "--out", seq, "--width", str(width), "--height", str(height), "--frames", "1",
                    "--object-width", "150", "--background-disparity", "16", "--object-disparity", "60"],
                   check=True, stdout=subprocess.DEVNULL, timeout=120)
    gt = ground_truth(os.path.join(seq, "gt_0000.png"))
    centre = (width // 2, height // 2)
    truth = gt[centre[1], centre[0]] / 16.0
    if truth != 60.0:
        failures.append(f"example sequence: ground truth at the centre is {truth}, not the object's 60")
    source = (f"multifilesrc location={os.path.join(seq, 'sbs_%04d.png')} stop-index=0 "
              "caps=image/png,framerate=30/1 ! pngdec ! videoconvert")
    rows = run("example sequence", ["--source", source, "--baseline", str(baseline), "--focal-length",
                                    str(focal)], 1)
    check("example sequence", rows, centre, truth, baseline * focal / truth, 0.5, 0.1)

    # Without calibration a real source gets disparities only, never metres
    # from made-up numbers, and depth output is refused by name.
    cmd = [sys.executable, EXAMPLE, "--backend", "cpu", "--frames", "1", "--source", source]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    print(f"== uncalibrated source\n{done.stdout}{done.stderr}", end="")
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 1 or \
            not re.search(r"disparity 60\.\d\d px \(depth: give --baseline and --focal-length\)$", lines[0]):
        failures.append("uncalibrated source: expected one line with disparity 60 px and no depth")
    done = subprocess.run(cmd + ["--output-mode", "depth", "--baseline", "0.1"], capture_output=True, text=True,
                          timeout=60)
    print(f"== uncalibrated source, depth\n{done.stdout}{done.stderr}", end="")
    if done.returncode != 2 or "--focal-length" not in done.stderr or done.stdout:
        failures.append("uncalibrated source, depth mode: expected usage error 2 naming --focal-length")

# 4. The custom meta's documented fields and types (gst/gstcudastereometa.h),
# in both output modes, and a copied buffer keeps it.
FIELDS = {"scale": int, "invalid-value": int, "min-disparity": int, "max-disparity": int,
          "foreground-fraction": float, "levels": int, "backend": str, "depth": bool, "placeholder": bool,
          "frame-index": int, "confidence": bool}
for mode in ("disparity", "depth"):
    p = Gst.parse_launch("videotestsrc pattern=snow num-buffers=2 ! video/x-raw,format=GRAY8,width=320,height=64 "
                         f"! cudastereo backend=cpu input-layout=side-by-side min-disparity=2 max-disparity=48 "
                         f"output-mode={mode} baseline=0.25 focal-length=640 ! video/x-raw,format=GRAY16_LE "
                         "! appsink name=sink sync=false")
    p.set_state(Gst.State.PLAYING)
    sample = p.get_by_name("sink").try_pull_sample(60 * Gst.SECOND)
    p.set_state(Gst.State.NULL)
    if sample is None:
        failures.append(f"custom meta, {mode}: no output")
        continue
    meta = sample.get_buffer().copy().get_custom_meta("GstCudaStereoCustomMeta")
    if meta is None:
        failures.append(f"custom meta, {mode}: not on a copy of the output buffer")
        continue
    fields = meta.get_structure()
    print(f"== custom meta, {mode}: {fields.to_string()}")
    if fields.get_name() != "GstCudaStereoCustomMeta":
        failures.append(f"custom meta, {mode}: structure named {fields.get_name()}")
    for name, kind in FIELDS.items():
        if not fields.has_field(name) or type(fields.get_value(name)) is not kind:
            failures.append(f"custom meta, {mode}: no {kind.__name__} field {name}")
    expected = {"scale": 16, "invalid-value": 0, "min-disparity": 2, "max-disparity": 48, "backend": "cpu",
                "depth": mode == "depth", "placeholder": False, "frame-index": 1, "foreground-fraction": 1.0,
                "confidence": False}
    if mode == "depth":
        expected.update({"baseline": 0.25, "focal-length": 640.0})
    elif fields.has_field("baseline") or fields.has_field("focal-length"):
        failures.append("custom meta, disparity: baseline or focal-length present outside depth mode")
    for name, value in expected.items():
        if fields.get_value(name) != value:
            failures.append(f"custom meta, {mode}: {name} = {fields.get_value(name)}, expected {value}")

for f in failures:
    print("FAIL:", f)
print("depth_at_centre:", "FAILED" if failures else "all checks passed")
sys.exit(1 if failures else 0)
