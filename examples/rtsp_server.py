#!/usr/bin/env python3
"""RTSP server: false-colour disparity as H.264 at rtsp://ADDRESS:PORT/MOUNT.

    python3 examples/rtsp_server.py                  # rtsp://127.0.0.1:8554/disparity
    vlc rtsp://127.0.0.1:8554/disparity
    ffplay -rtsp_transport tcp rtsp://127.0.0.1:8554/disparity

Sources (--source):
  example   the built-in example sequence (a textured object moving in front
            of a textured wall), looping; generated with build/tools/cs-makeseq
            into a temporary folder, or read from --sequence DIR (e.g. out/example
            from scripts/quickstart.sh). The default.
  test      a live random-texture pair at one constant disparity (videotestsrc),
            needing nothing but GStreamer's own elements.
  anything else: a launch-line fragment giving side-by-side frames (top-bottom
            with --layout top-bottom) of rectified views, e.g. a side-by-side
            USB stereo camera:  --source "v4l2src device=/dev/video0 ! videoconvert"

All viewers share one pipeline (one matching run however many watch); it
starts with the first viewer and stops when the last leaves. --address 0.0.0.0
serves other machines. The encoder is x264enc (gstreamer1.0-plugins-ugly,
tune=zerolatency) when installed, else openh264enc (gstreamer1.0-plugins-bad);
both get I420, which every H.264 player decodes, so the views' width and
height must be even.

Needs Debian's python3-gi, gir1.2-gstreamer-1.0 and gir1.2-gst-rtsp-server-1.0
(scripts/deps.sh installs them) and finds the plugin through
GST_PLUGIN_PATH_1_0 (default: this checkout's build/gst). Prints
"serving rtsp://..." with the real port once it listens (--port 0 picks a free one).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstRtspServer", "1.0")
    from gi.repository import GLib, Gst, GstRtspServer
except (ImportError, ValueError) as e:
    sys.exit(f"rtsp_server.py: {e}\n"
             "Install python3-gi, gir1.2-gstreamer-1.0 and gir1.2-gst-rtsp-server-1.0 (scripts/deps.sh does) "
             "and run Debian's /usr/bin/python3, for which they are built.")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8554, help="TCP port (default 8554; 0 = any free one)")
    p.add_argument("--mount", default="/disparity", help="path of the stream (default /disparity)")
    p.add_argument("--source", default="example", help="example, test, or a launch-line fragment (see below)")
    p.add_argument("--layout", default="side-by-side", choices=["side-by-side", "top-bottom"],
                   help="how a --source fragment packs the two views")
    p.add_argument("--sequence", help="example source: folder of sbs_%%04d.png frames to loop instead of "
                   "generating them")
    p.add_argument("--makeseq", default=os.path.join(ROOT, "build", "tools", "cs-makeseq"),
                   help="example source: the cs-makeseq program (default build/tools/cs-makeseq)")
    p.add_argument("--size", default="640x360",
                   help="example and test sources: one view's WIDTHxHEIGHT (default 640x360)")
    p.add_argument("--stereo", default="max-disparity=64",
                   help="cudastereo properties, e.g. \"max-disparity=128 background=true colormap=jet\" "
                   "(default \"max-disparity=64\")")
    p.add_argument("--encoder", default="auto", choices=["auto", "x264", "openh264"],
                   help="H.264 encoder (default: x264 when installed, else openh264)")
    p.add_argument("--bitrate", type=int, default=2000, help="kbit/s (default 2000)")
    args = p.parse_args()
    try:
        args.width, args.height = (int(v) for v in args.size.split("x"))
    except ValueError:
        p.error(f"--size must be WIDTHxHEIGHT, not '{args.size}'")
    if args.width % 2 or args.height % 2:
        p.error("--size: H.264 in I420 needs an even width and height")
    if not args.mount.startswith("/"):
        p.error("--mount must start with /")
    return args


def encoder(args):
    """The encoder and its settings for live viewing: no B-frames, a key frame
    every second so a viewer who joins a running stream waits at most that."""
    kind = args.encoder
    if kind == "auto":
        kind = "x264" if Gst.ElementFactory.find("x264enc") else "openh264"
    if kind == "x264":
        if not Gst.ElementFactory.find("x264enc"):
            sys.exit("rtsp_server.py: no x264enc; install gstreamer1.0-plugins-ugly or use --encoder openh264")
        # Constrained baseline, as openh264enc gives, and one slice a frame
        # (threads=1: zerolatency's sliced threads cut frames into slices that
        # openh264dec 2.3 fails to decode after RTP), so every H.264 decoder
        # plays it; one thread of ultrafast is far faster than the matching.
        return (f"x264enc tune=zerolatency speed-preset=ultrafast threads=1 key-int-max=30 bitrate={args.bitrate} "
                "! video/x-h264,profile=constrained-baseline")
    if not Gst.ElementFactory.find("openh264enc"):
        sys.exit("rtsp_server.py: no openh264enc; install gstreamer1.0-plugins-bad or use --encoder x264")
    return f"openh264enc gop-size=30 bitrate={args.bitrate * 1000} complexity=low"


def make_sequence(args):
    """Folder of the example sequence's side-by-side frames, and a temporary
    folder to remove at exit (or None)."""
    if args.sequence:
        if not os.path.isfile(os.path.join(args.sequence, "sbs_0000.png")):
            sys.exit(f"rtsp_server.py: no sbs_0000.png in {args.sequence}")
        return args.sequence, None
    if not os.access(args.makeseq, os.X_OK):
        sys.exit(f"rtsp_server.py: {args.makeseq} not found; build the project (scripts/quickstart.sh), "
                 "or pass --makeseq, --sequence DIR or --source test")
    folder = tempfile.mkdtemp(prefix="cs-rtsp-")
    print(f"generating the example sequence ({args.width}x{args.height}) in {folder}", flush=True)
    try:
        made = subprocess.run([args.makeseq, "--out", folder, "--width", str(args.width), "--height",
                               str(args.height), "--frames", "60"], stdout=subprocess.DEVNULL)
        if made.returncode != 0:
            sys.exit("rtsp_server.py: cs-makeseq failed")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, folder


def media_launch(args, sequence):
    stereo = f"cudastereo name=stereo {args.stereo}"
    # False colour, then I420: x264enc would otherwise pick 4:4:4 from RGB,
    # which most players cannot decode.
    tail = (f"video/x-raw,format=RGBA ! videoconvert ! video/x-raw,format=I420 ! {encoder(args)} "
            "! rtph264pay name=pay0 pt=96 config-interval=-1")
    if args.source == "example":
        src = (f"multifilesrc location={os.path.join(sequence, 'sbs_%04d.png')} loop=true "
               "caps=image/png,framerate=30/1 ! pngdec ! videoconvert")
        return f"( {src} ! {stereo} input-layout=side-by-side ! {tail} )"
    if args.source == "test":
        # One live texture, wider than a view by the disparity: the left view
        # is its left part, the right view its right part.
        d = 16
        texture = (f"videotestsrc is-live=true pattern=snow ! video/x-raw,format=GRAY8,width={args.width + d},"
                   f"height={args.height},framerate=30/1 ! tee name=t")
        return (f"( {stereo} ! {tail} {texture} t. ! queue ! videocrop right={d} ! stereo.sink_left "
                f"t. ! queue ! videocrop left={d} ! stereo.sink_right )")
    return f"( {args.source} ! {stereo} input-layout={args.layout} ! {tail} )"


def main():
    args = parse_args()
    # Until the main loop takes over, a SIGTERM unwinds through the finally
    # that removes the generated sequence.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    if "GST_PLUGIN_PATH_1_0" not in os.environ and os.path.isdir(os.path.join(ROOT, "build", "gst")):
        os.environ["GST_PLUGIN_PATH_1_0"] = os.path.join(ROOT, "build", "gst")
    Gst.init(None)
    if not Gst.ElementFactory.find("cudastereo"):
        sys.exit("rtsp_server.py: no cudastereo element; set GST_PLUGIN_PATH_1_0 to the folder of "
                 "libgstcudastereo.so (build/gst)")
    sequence, temporary = make_sequence(args) if args.source == "example" else (None, None)
    try:
        launch = media_launch(args, sequence)
        try:  # fail here, not at the first viewer, on a launch line that does not parse
            Gst.parse_launch(launch.strip("() ")).set_state(Gst.State.NULL)
        except GLib.Error as e:
            sys.exit(f"rtsp_server.py: bad pipeline: {e.message}\n{launch}")

        server = GstRtspServer.RTSPServer()
        server.set_address(args.address)
        server.set_service(str(args.port))
        factory = GstRtspServer.RTSPMediaFactory()
        factory.set_launch(launch)
        factory.set_shared(True)
        server.get_mount_points().add_factory(args.mount, factory)
        if server.attach(None) == 0:
            sys.exit(f"rtsp_server.py: cannot listen on {args.address}:{args.port}")

        loop = GLib.MainLoop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signum, loop.quit)
        print(f"serving rtsp://{args.address}:{server.get_bound_port()}{args.mount}", flush=True)
        loop.run()
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
