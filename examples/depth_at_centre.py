#!/usr/bin/env python3
"""Depth at the image centre, from Python.

Runs `cudastereo` on a stereo source, takes its raw GRAY16_LE output through
appsink as a numpy array, reads the per-buffer metadata (the
"GstCudaStereoCustomMeta" custom meta, gst/gstcudastereometa.h) and prints,
per frame, the disparity and the depth at the centre pixel.

    python3 examples/depth_at_centre.py                      # built-in source
    python3 examples/depth_at_centre.py --output-mode depth  # millimetres out
    python3 examples/depth_at_centre.py --frames 30 \\
        --source "multifilesrc location=out/example/sbs_%04d.png caps=image/png,framerate=30/1 ! pngdec ! videoconvert"
    python3 examples/depth_at_centre.py --frames 100 --baseline 0.06 --focal-length 520 \\
        --source "v4l2src device=/dev/video0 ! videoconvert"  # side-by-side USB stereo camera

The built-in source needs nothing but GStreamer's own elements: random
texture (videotestsrc pattern=snow) seen by two views --disparity pixels
apart, so every pixel's disparity is known. --source takes any launch-line
fragment that gives side-by-side (or, with --layout top-bottom, top-bottom)
frames of rectified views. The depth is baseline * focal-length / disparity
with the element's `baseline` (metres) and `focal-length` (pixels): with
--source, give your calibration's (without them it prints disparities only,
and --output-mode depth is refused); the built-in source is a made-up camera
of 0.12 m and 700 px unless they are given.

Needs Debian's python3-gi, gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0
and python3-numpy (scripts/deps.sh installs them) and finds the plugin
through GST_PLUGIN_PATH_1_0 (default: this checkout's build/gst).
"""
import argparse
import os
import sys

CUSTOM_META = "GstCudaStereoCustomMeta"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILT_IN_BASELINE_M = 0.12  # the built-in source's made-up camera
BUILT_IN_FOCAL_PX = 700.0

try:
    import gi
    import numpy as np

    gi.require_version("Gst", "1.0")
    gi.require_version("GstApp", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstApp, GstVideo  # noqa: F401 (GstApp adds appsink methods)
except (ImportError, ValueError) as e:
    sys.exit(f"depth_at_centre.py: {e}\n"
             "Install python3-gi, gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0 and python3-numpy "
             "(scripts/deps.sh does) and run Debian's /usr/bin/python3, for which they are built.")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", help="launch-line fragment giving packed stereo frames "
                   "(default: the built-in random-texture pair)")
    p.add_argument("--layout", default="side-by-side", choices=["side-by-side", "top-bottom"],
                   help="how --source packs the two views")
    p.add_argument("--frames", type=int, default=5, help="frames to process (default 5)")
    p.add_argument("--output-mode", default="disparity", choices=["disparity", "depth"],
                   help="take raw disparity (d * scale) or depth in millimetres from the element")
    p.add_argument("--baseline", type=float,
                   help="metres between the cameras, from calibration (built-in source: 0.12 unless given)")
    p.add_argument("--focal-length", type=float,
                   help="focal length of the rectified views, pixels, from calibration "
                        "(built-in source: 700 unless given)")
    p.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--max-disparity", type=int, default=64, help="exclusive search limit, pixels (default 64)")
    p.add_argument("--disparity", type=int, default=20,
                   help="built-in source: the disparity of every pixel, pixels (default 20)")
    p.add_argument("--size", default="320x240", help="built-in source: one view's WIDTHxHEIGHT (default 320x240)")
    args = p.parse_args()
    try:
        args.width, args.height = (int(v) for v in args.size.split("x"))
    except ValueError:
        p.error(f"--size must be WIDTHxHEIGHT, not '{args.size}'")
    if args.frames < 1:
        p.error("--frames must be at least 1")
    if not 0 <= args.disparity < args.max_disparity:
        p.error("--disparity must be in 0 .. --max-disparity - 1")
    if not args.source:  # the built-in source's made-up camera
        args.baseline = BUILT_IN_BASELINE_M if args.baseline is None else args.baseline
        args.focal_length = BUILT_IN_FOCAL_PX if args.focal_length is None else args.focal_length
    args.calibrated = args.baseline is not None and args.focal_length is not None
    if args.output_mode == "depth" and not args.calibrated:
        p.error("--output-mode depth needs your cameras' --baseline (metres) and --focal-length (pixels)")
    for name in ("baseline", "focal_length"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive")
    return args


def pipeline_description(args):
    stereo = (f"cudastereo name=stereo backend={args.backend} max-disparity={args.max_disparity} "
              f"output-mode={args.output_mode}")
    if args.calibrated:
        stereo += f" baseline={args.baseline} focal-length={args.focal_length}"
    sink = "video/x-raw,format=GRAY16_LE ! appsink name=sink sync=false max-buffers=4"
    if args.source:
        return f"{args.source} ! {stereo} input-layout={args.layout} ! {sink}"
    # One texture, wider than a view by the disparity; the left view is its
    # left part and the right view its right part, so left pixel x shows the
    # texture point the right view shows at x - disparity.
    d = args.disparity
    texture = (f"videotestsrc pattern=snow num-buffers={args.frames} "
               f"! video/x-raw,format=GRAY8,width={args.width + d},height={args.height},framerate=30/1 ! tee name=t")
    return (f"{stereo} ! {sink} {texture} "
            f"t. ! queue ! videocrop right={d} ! stereo.sink_left "
            f"t. ! queue ! videocrop left={d} ! stereo.sink_right")


def disparity_image(sample):
    """The output frame as a (height, width) uint16 array, honouring the row stride."""
    buf = sample.get_buffer()
    info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
    stride, offset = info.stride[0], info.offset[0]
    vmeta = GstVideo.buffer_get_video_meta(buf)
    if vmeta:  # an allocator may pad rows differently from the default layout
        stride, offset = vmeta.stride[0], vmeta.offset[0]
    ok, mapped = buf.map(Gst.MapFlags.READ)
    if not ok:
        raise RuntimeError("could not map an output buffer")
    try:
        rows = np.ndarray((info.height, info.width), dtype="<u2", buffer=mapped.data, offset=offset,
                          strides=(stride, 2))
        return rows.copy()
    finally:
        buf.unmap(mapped)


def report(index, image, fields, stereo):
    y, x = image.shape[0] // 2, image.shape[1] // 2
    value = int(image[y, x])
    where = f"frame {index} (backend {fields.get_value('backend')}, frame-index {fields.get_value('frame-index')}): " \
            f"centre ({x}, {y})"
    if fields.get_value("placeholder"):
        return f"{where}: no result (placeholder frame)"
    if value == fields.get_value("invalid-value"):
        return f"{where}: no disparity"
    if fields.get_value("depth"):
        if value == 65535:  # the largest millimetre value stands for everything that far or farther
            return f"{where}: depth 65.535 m or more"
        # Millimetres; the meta says which baseline and focal length made them.
        depth_m = value / 1000.0
        disparity = fields.get_value("baseline") * fields.get_value("focal-length") / depth_m
    else:
        disparity = value / fields.get_value("scale")
        baseline, focal = stereo.get_property("baseline"), stereo.get_property("focal-length")
        if baseline <= 0 or focal <= 0:  # not calibrated: no metres from made-up numbers
            return f"{where}: disparity {disparity:.2f} px (depth: give --baseline and --focal-length)"
        depth_m = baseline * focal / disparity
    return f"{where}: disparity {disparity:.2f} px, depth {depth_m:.3f} m"


def main():
    args = parse_args()
    if "GST_PLUGIN_PATH_1_0" not in os.environ and os.path.isdir(os.path.join(ROOT, "build", "gst")):
        os.environ["GST_PLUGIN_PATH_1_0"] = os.path.join(ROOT, "build", "gst")
    Gst.init(None)
    if not Gst.ElementFactory.find("cudastereo"):
        sys.exit("depth_at_centre.py: no cudastereo element; set GST_PLUGIN_PATH_1_0 to the folder of "
                 "libgstcudastereo.so (build/gst)")
    try:
        pipeline = Gst.parse_launch(pipeline_description(args))
    except gi.repository.GLib.Error as e:
        sys.exit(f"depth_at_centre.py: bad pipeline: {e.message}")
    sink = pipeline.get_by_name("sink")
    stereo = pipeline.get_by_name("stereo")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    status, done = 0, 0
    try:
        while done < args.frames:
            error = bus.pop_filtered(Gst.MessageType.ERROR)
            if error:
                err, debug = error.parse_error()
                print(f"error from {error.src.get_name()}: {err.message}\n{debug}", file=sys.stderr)
                status = 1
                break
            sample = sink.try_pull_sample(Gst.SECOND)
            if sample is None:
                if sink.is_eos():
                    break
                continue
            meta = sample.get_buffer().get_custom_meta(CUSTOM_META)
            if meta is None:
                print(f"frame {done}: no {CUSTOM_META} on the output buffer", file=sys.stderr)
                status = 1
                break
            print(report(done, disparity_image(sample), meta.get_structure(), stereo), flush=True)
            done += 1
    except KeyboardInterrupt:
        pass
    finally:
        pipeline.set_state(Gst.State.NULL)
    if status == 0 and done < args.frames:
        print(f"the source ended after {done} of {args.frames} frames", file=sys.stderr)
    return status if done else 1


if __name__ == "__main__":
    sys.exit(main())
