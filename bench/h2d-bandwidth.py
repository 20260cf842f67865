# Host-to-device copy bandwidth of pinned system memory, GPU 0 alone, GPU 1
# alone and both at once (each from its own buffer): frames of 3840x1080
# RGBA (16.6 MB), as cameras.sh sends them. The reference for issue 16's
# system-memory rows on two GPUs (bench/RESULTS.md, issue 16). Needs two GPUs and
# PyTorch (the device machines have it; the project does not depend on it):
#   python3 bench/h2d-bandwidth.py
import time, torch
n = 3840 * 1080 * 4
reps = 300
srcs = [torch.empty(n, dtype=torch.uint8).pin_memory() for _ in range(2)]
dst = {d: torch.empty(n, dtype=torch.uint8, device=f"cuda:{d}") for d in (0, 1)}
streams = {d: torch.cuda.Stream(device=d) for d in (0, 1)}
def run(devs):
    for d in devs: torch.cuda.synchronize(d)
    t = time.perf_counter()
    for _ in range(reps):
        for k, d in enumerate(devs):
            with torch.cuda.stream(streams[d]):
                dst[d].copy_(srcs[k], non_blocking=True)
    for d in devs: torch.cuda.synchronize(d)
    dt = time.perf_counter() - t
    return reps * len(devs) * n / dt / 1e9
for devs in ((0,), (1,), (0, 1)):
    run(devs)
    g = run(devs)
    print(f"h2d pinned, GPUs {devs}: {g:.1f} GB/s in total ({g / len(devs):.1f} each), {g * 1e9 / n:.0f} frames/s of 16.6 MB")
