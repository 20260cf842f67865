#!/usr/bin/env python3
"""examples/rtsp_server.py served on loopback and watched by real RTSP clients.

  test_rtsp_server.py SERVER CS_MAKESEQ

For each H.264 encoder the server can use here (openh264enc, and x264enc
when installed), starts the server on a free port of 127.0.0.1 (CPU backend, the built-in
example sequence at 320x180, grey colour map so the picture has known
values), plays the stream with two rtspsrc clients at once (RTP over TCP and
over UDP, both on loopback) through rtph264depay ! h264parse ! an H.264
decoder, and requires of each, within a bounded time: at least 30 decoded
frames of 320x180, and a last frame whose values are the sequence's
disparities (the wall, disparity 16 of 64, covers most of it; the object,
disparity 40, a known part). Then stops the server. A run in which neither
client got any frame is repeated once with a new server (printed). Exit 77 (skip) when
Python lacks gi or GstRtspServer.
"""
import ctypes
import select
import signal
import subprocess
import sys
import time

try:
    import gi
    import numpy as np

    gi.require_version("Gst", "1.0")
    gi.require_version("GstApp", "1.0")
    gi.require_version("GstRtspServer", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstApp, GstRtspServer, GstVideo  # noqa: F401
except (ImportError, ValueError) as e:
    print(f"SKIP: {sys.executable} lacks {e} (install python3-gi, gir1.2-gst-rtsp-server-1.0, python3-numpy)")
    sys.exit(77)

SERVER, MAKESEQ = sys.argv[1], sys.argv[2]
WIDTH, HEIGHT, FRAMES = 320, 180, 30
MAX_DISPARITY, WALL, OBJECT = 64, 16, 40
START_TIMEOUT_S, PLAY_TIMEOUT_S = 90, 90
UDP_TIMEOUT_US = 60_000_000  # rtspsrc's wait for the first UDP packet


def luma(d):
    """The decoded Y of disparity d: colormap=grey gives GRAY8's value
    1 + d * 254 / max (rounded) in R = G = B, which the server's conversion
    to I420 puts in video range, Y = 16 + 219 * value / 255."""
    full = MAX_DISPARITY * 16
    value = 1 + (d * 16 * 254 + full // 2) // full
    return 16 + 219 * value / 255


def die_with_parent():
    """Runs in the server's process: the kernel ends it when this test dies
    (a meson timeout, say), so no server outlives its test."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start_server(encoder):
    cmd = [sys.executable, SERVER, "--address", "127.0.0.1", "--port", "0", "--size", f"{WIDTH}x{HEIGHT}",
           "--makeseq", MAKESEQ, "--stereo", f"backend=cpu max-disparity={MAX_DISPARITY} colormap=grey",
           "--encoder", encoder]
    print("== server:", " ".join(cmd[1:]), flush=True)
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([server.stdout], [], [], 1.0)
        if not ready:
            if server.poll() is not None:
                break
            continue
        line = server.stdout.readline()
        if not line:
            break
        print("server:", line.rstrip(), flush=True)
        if line.startswith("serving rtsp://"):
            return server, line.split()[1]
    stop_server(server)
    sys.exit("FAIL: the server did not say it was serving")


def stop_server(server):
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            print("FAIL: the server did not stop on SIGTERM within 15 s")
            return False
    return server.returncode == 0


class Client:
    def __init__(self, url, protocol):
        decoder = "avdec_h264" if Gst.ElementFactory.find("avdec_h264") else "openh264dec"
        self.protocol = protocol
        self.pipeline = Gst.parse_launch(
            # timeout: rtspsrc gives UDP 5 s for its first packet and then, with
            # no other protocol allowed, fails; a loaded machine can take longer
            # to match and encode the first frames (seen once, with every core
            # busy compiling beside the test).
            f"rtspsrc location={url} protocols={protocol} latency=200 timeout={UDP_TIMEOUT_US} "
            f"! rtph264depay ! h264parse ! {decoder} "
            "! video/x-raw,format=I420 ! appsink name=sink sync=false max-buffers=2 drop=true")
        self.sink = self.pipeline.get_by_name("sink")
        self.frames, self.sizes, self.last = 0, set(), None
        self.error = None

    def poll(self):
        """Takes what has arrived; False once the client failed."""
        msg = self.pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
        if msg:
            err, debug = msg.parse_error()
            self.error = f"{err.message} ({debug})"
            return False
        while True:
            sample = self.sink.try_pull_sample(0)
            if sample is None:
                return True
            info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
            self.sizes.add((info.width, info.height))
            buf = sample.get_buffer()
            stride, offset = info.stride[0], info.offset[0]
            vmeta = GstVideo.buffer_get_video_meta(buf)
            if vmeta:
                stride, offset = vmeta.stride[0], vmeta.offset[0]
            ok, mapped = buf.map(Gst.MapFlags.READ)
            if not ok:
                self.error = "cannot map a decoded frame"
                return False
            self.last = np.ndarray((info.height, info.width), dtype=np.uint8, buffer=mapped.data, offset=offset,
                                   strides=(stride, 1)).copy()
            buf.unmap(mapped)
            self.frames += 1


def serve_and_watch(encoder):
    """Failures of one server run with `encoder`, and whether any client
    decoded a frame."""
    server, url = start_server(encoder)
    failures = []
    clients = []
    try:
        clients = [Client(url, "tcp"), Client(url, "udp")]
        for c in clients:
            c.pipeline.set_state(Gst.State.PLAYING)
        deadline = time.monotonic() + PLAY_TIMEOUT_S
        while time.monotonic() < deadline and server.poll() is None:
            if not all(c.poll() for c in clients) or all(c.frames >= FRAMES for c in clients):
                break
            time.sleep(0.05)
        if server.poll() is not None:
            failures.append(f"the server exited with status {server.returncode} while serving")
        for c in clients:
            print(f"client over {c.protocol}: {c.frames} frames, sizes {sorted(c.sizes)}")
            if c.error:
                failures.append(f"client over {c.protocol}: {c.error}")
            if c.frames < FRAMES:
                failures.append(f"client over {c.protocol}: {c.frames} frames in {PLAY_TIMEOUT_S} s, "
                                f"expected at least {FRAMES}")
            if c.sizes and c.sizes != {(WIDTH, HEIGHT)}:
                failures.append(f"client over {c.protocol}: frame sizes {sorted(c.sizes)}, expected "
                                f"{WIDTH}x{HEIGHT}")
            if c.last is not None:
                median = float(np.median(c.last))
                near_object = float(np.mean(np.abs(c.last - luma(OBJECT)) <= 6))
                print(f"client over {c.protocol}: last frame's median Y {median} (the wall's {luma(WALL):.1f}), "
                      f"{near_object:.3f} of it near the object's {luma(OBJECT):.1f}")
                if abs(median - luma(WALL)) > 4:
                    failures.append(f"client over {c.protocol}: median Y {median}, expected the wall's "
                                    f"{luma(WALL):.1f}")
                # The object is a twelfth of the view, less what the cross-check
                # leaves invalid at its edges.
                if not 0.04 <= near_object <= 0.12:
                    failures.append(f"client over {c.protocol}: {near_object:.3f} of the frame at the object's "
                                    "value, expected 0.04 to 0.12")
    finally:
        for c in clients:
            c.pipeline.set_state(Gst.State.NULL)
        if not stop_server(server):
            failures.append(f"the server's exit status is {server.returncode}, not 0")
    return [f"{encoder}: {f}" for f in failures], any(c.frames > 0 for c in clients)


def main():
    # A SIGTERM (meson's timeout) unwinds through the finally that stops the server.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit("FAIL: terminated"))
    Gst.init(None)
    # openh264enc is in gstreamer1.0-plugins-bad, which the project needs;
    # x264enc (gstreamer1.0-plugins-ugly) is the server's choice when present.
    encoders = ["openh264"] + (["x264"] if Gst.ElementFactory.find("x264enc") else [])
    failures = []
    for encoder in encoders:
        found, streamed = serve_and_watch(encoder)
        if found and not streamed:
            # Neither client got a single frame: the stream never started (seen
            # once with openh264 in a local CI run, both clients empty for 60 s;
            # the same run passed when repeated, cause not found). One more
            # server and clients; a stream that never starts fails both.
            for f in found:
                print("first try:", f)
            print(f"rtsp_server: {encoder}: no client got a frame; once more with a new server", flush=True)
            found, streamed = serve_and_watch(encoder)
        failures += found
    for f in failures:
        print("FAIL:", f)
    print("rtsp_server:", "FAILED" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
