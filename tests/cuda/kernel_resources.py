#!/usr/bin/env python3
"""Registers, shared memory, stack and block size of every kernel the CUDA
engine was built with, per target architecture, against that architecture's
limits. Reads the cubins nvcc kept while building the library (--keep; the
same code that ships) and the configurations the engine launches
(cs-kernel-configs: block size, dynamic shared memory and the blocks an SM
must hold, from the same constexprs the launches use). Fails, listing each
problem, when a kernel does not fit a target.

Usage: kernel_resources.py KEEP_DIR CONFIGS_PROGRAM [--extra-config LINE]
"""
import glob
import os
import struct
import subprocess
import sys

# Per compute capability: opt-in shared memory per block, shared memory per
# SM, driver's reserve per block, threads per SM, blocks per SM (CUDA C++
# Programming Guide, technical specifications per compute capability;
# cuda_occupancy.h).
# 64K registers per SM and 1024 threads per block everywhere, 48 KB of
# static shared memory a block.
KIB = 1024
LIMITS = {
    75: (64 * KIB, 64 * KIB, 0, 1024, 16),
    80: (163 * KIB, 164 * KIB, KIB, 2048, 32),
    86: (99 * KIB, 100 * KIB, KIB, 1536, 16),
    87: (163 * KIB, 164 * KIB, KIB, 1536, 16),
    89: (99 * KIB, 100 * KIB, KIB, 1536, 24),
    90: (227 * KIB, 228 * KIB, KIB, 2048, 32),
}
REGISTERS_PER_SM = 65536
MAX_THREADS_PER_BLOCK = 1024
STATIC_SHARED_MAX = 48 * KIB

EIATTR_MAX_THREADS = 0x05
EIATTR_FRAME_SIZE = 0x11
EIATTR_REGCOUNT = 0x2F
EIFMT_SVAL = 4


def sections(elf):
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = []
    for i in range(shnum):
        name, stype, flags, addr, off, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", elf, shoff + i * shentsize)
        heads.append((name, stype, off, size, link, info, entsize))
    strtab_off = heads[shstrndx][2]

    def cstr(base, at):
        end = elf.index(b"\0", base + at)
        return elf[base + at:end].decode()

    return [dict(name=cstr(strtab_off, h[0]), type=h[1], off=h[2], size=h[3], link=h[4], info=h[5],
                 entsize=h[6]) for h in heads], cstr


def attributes(elf, sec):
    """(attribute, payload) pairs of a .nv.info section."""
    at, end = sec["off"], sec["off"] + sec["size"]
    while at + 4 <= end:
        fmt, attr, size = struct.unpack_from("<BBH", elf, at)
        if fmt == EIFMT_SVAL:
            yield attr, elf[at + 4:at + 4 + size]
            at += 4 + size
        else:
            yield attr, struct.pack("<H", size)
            at += 4


def kernels_of(path):
    """arch, {mangled kernel: dict(registers, static_shared, stack, max_threads)}"""
    elf = open(path, "rb").read()
    if elf[:4] != b"\x7fELF":
        raise ValueError(f"{path} is not an ELF cubin")
    arch = (struct.unpack_from("<I", elf, 0x30)[0] >> 8) & 0xFF
    secs, cstr = sections(elf)
    symtab = next(s for s in secs if s["name"] == ".symtab")
    strtab = secs[symtab["link"]]
    symbols = []
    for i in range(symtab["size"] // symtab["entsize"]):
        name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", elf, symtab["off"] + i * 24)
        symbols.append(cstr(strtab["off"], name))
    kernels = {}
    for s in secs:
        # A kernel has its parameters' constant bank.
        if s["name"].startswith(".nv.constant0."):
            kernels[s["name"][len(".nv.constant0."):]] = dict(registers=0, static_shared=0, stack=0,
                                                               max_threads=None)
    # From sm_80 the driver's reserve (1 KB) opens every kernel's shared
    # section; cudaFuncGetAttributes and ptxas count the kernel's own bytes.
    reserve = next((LIMITS.get(arch, (0, 0, 0))[2] for s in secs if s["name"].startswith(".nv.shared.reserved.")), 0)
    for s in secs:
        n = s["name"]
        if n.startswith(".nv.shared.") and n[len(".nv.shared."):] in kernels:
            kernels[n[len(".nv.shared."):]]["static_shared"] = max(s["size"] - reserve, 0)
        elif n == ".nv.info":
            for attr, data in attributes(elf, s):
                if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and len(data) >= 8:
                    sym, value = struct.unpack_from("<II", data)
                    k = kernels.get(symbols[sym])
                    if k is not None:
                        k["registers" if attr == EIATTR_REGCOUNT else "stack"] = value
        elif n.startswith(".nv.info.") and n[len(".nv.info."):] in kernels:
            for attr, data in attributes(elf, s):
                if attr == EIATTR_MAX_THREADS and len(data) >= 12:
                    x, y, z = struct.unpack_from("<III", data)
                    kernels[n[len(".nv.info."):]]["max_threads"] = x * y * z
    return arch, kernels


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, out.splitlines()))


ANON = "(anonymous namespace)"


def short(demangled):
    """cs::cuda::(anonymous namespace)::streaming::phased::refine_kernel<2, true, 24>(...) ->
    streaming::phased::refine_kernel<2, true, 24>"""
    # Function templates' names open with their return type.
    name, depth, i = demangled[5:] if demangled.startswith("void ") else demangled, 0, 0
    while i < len(name):
        if name.startswith(ANON, i):
            i += len(ANON)
            continue
        c = name[i]
        depth += c == "<"
        depth -= c == ">"
        if c == "(" and depth == 0:
            name = name[:i]
            break
        i += 1
    for prefix in ("cs::cuda::" + ANON + "::", "cs::cuda::"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def configs(program, extra):
    """{kernel: [(threads, dynamic bytes, min blocks per SM, required, what)]} from the configs program."""
    lines = subprocess.run([program], capture_output=True, text=True, check=True).stdout.splitlines() + extra
    table = {}
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        kernel, threads, dynamic, min_blocks, required, what = line.split("\t")
        table.setdefault(kernel, []).append((int(threads), int(dynamic), int(min_blocks), required == "required",
                                             what))
    return table


def register_allocation(registers, threads):
    per_warp = (registers * 32 + 255) // 256 * 256
    return per_warp * ((threads + 31) // 32)


def main():
    keep_dir, program = sys.argv[1], sys.argv[2]
    extra = [sys.argv[i + 1].replace("\\t", "\t") for i, a in enumerate(sys.argv) if a == "--extra-config"]
    cubins = sorted(glob.glob(os.path.join(keep_dir, "*.cubin")))
    if not cubins:
        print(f"no cubins in {keep_dir}: is the library built with --keep?")
        return 1
    table = configs(program, extra)
    found = {}
    for path in cubins:
        arch, kernels = kernels_of(path)
        for mangled, k in kernels.items():
            found.setdefault(mangled, {})[arch] = k
    names = demangle(sorted(found))
    problems, rows, archs = [], [], set()
    for mangled, per_arch in sorted(found.items(), key=lambda kv: short(names[kv[0]])):
        name = short(names[mangled])
        launches = table.get(name)
        for arch, k in sorted(per_arch.items()):
            archs.add(arch)
            if arch not in LIMITS:
                problems.append(f"{name} sm_{arch}: no limits known for this architecture")
                continue
            optin, per_sm, reserved, threads_per_sm, blocks_per_sm = LIMITS[arch]
            if launches is None:
                if k["max_threads"] is None:
                    problems.append(f"{name} sm_{arch}: no launch bounds and no configuration: block size unknown")
                    continue
                launches = [(k["max_threads"], 0, 0, True, "launch bounds")]
            for threads, dynamic, min_blocks, required, what in launches:
                shared = k["static_shared"] + dynamic
                regs = register_allocation(k["registers"], threads)
                by_regs = REGISTERS_PER_SM // regs if regs else 32
                by_threads = threads_per_sm // threads
                by_shared = per_sm // (shared + reserved) if shared + reserved else 32
                fits = shared <= optin
                blocks = min(by_regs, by_threads, by_shared, blocks_per_sm) if fits else 0
                rows.append((name, arch, k["registers"], k["stack"], k["static_shared"], dynamic, threads, blocks,
                             what))
                where = f"{name} sm_{arch} ({what})"
                if threads > MAX_THREADS_PER_BLOCK:
                    problems.append(f"{where}: {threads} threads a block > {MAX_THREADS_PER_BLOCK}")
                if k["max_threads"] is not None and threads > k["max_threads"]:
                    problems.append(f"{where}: launched with {threads} threads, built for at most {k['max_threads']}")
                if regs > REGISTERS_PER_SM:
                    problems.append(f"{where}: {k['registers']} registers x {threads} threads > 64K")
                if k["static_shared"] > STATIC_SHARED_MAX:
                    problems.append(f"{where}: {k['static_shared']} bytes of static shared memory > 48 KB")
                if min_blocks and blocks and blocks < min_blocks and (regs * min_blocks > REGISTERS_PER_SM or
                                                                      threads * min_blocks > threads_per_sm):
                    problems.append(f"{where}: {min_blocks} blocks an SM wanted, {blocks} fit")
                if required and not fits:
                    problems.append(f"{where}: {shared} bytes of shared memory a block > {optin} (sm_{arch} opt-in)")
                elif required and blocks < 1:
                    problems.append(f"{where}: not one block fits an SM")
    print(f"{'kernel':58} {'arch':>6} {'regs':>4} {'stack':>5} {'static':>6} {'dynamic':>7} {'thr':>4} {'blk/SM':>6}  launch")
    for name, arch, regs, stack, static, dynamic, threads, blocks, what in rows:
        print(f"{name[:58]:58} sm_{arch:<3} {regs:4} {stack:5} {static:6} {dynamic:7} {threads:4} "
              f"{blocks if blocks else 'NOFIT':>6}  {what}")
    print(f"\n{len(found)} kernels, architectures: {' '.join(f'sm_{a}' for a in sorted(archs))}")
    if problems:
        print(f"\nFAIL: {len(problems)} problems")
        for p in problems:
            print("  " + p)
        return 1
    print("every kernel fits every target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
