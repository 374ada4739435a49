#!/usr/bin/env python3
"""Names the frames of bench_pipelines' sampled stacks (CUV_PROFILE_STACKS=FILE with
--profile-host) from a build's debug information, static functions included, and prints the
functions by self and by total samples.
    tests/bench/host_profile.py STACKS BUILD_DIR [TOP]
Frames in a library found under BUILD_DIR (the plugin) are named by addr2line; the others keep
the exported name the device gave them (dladdr), or their library."""
import collections
import os
import subprocess
import sys


def main():
    stacks, build = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    libs = {}
    for root, _, files in os.walk(build):
        for f in files:
            if f.endswith('.so') and f not in libs:
                libs[f] = os.path.join(root, f)
    samples = [line.split() for line in open(stacks) if line.strip()]
    wanted = collections.defaultdict(set)
    for s in samples:
        for frame in s:
            lib, rest = frame.split('+', 1)
            if lib in libs:
                wanted[lib].add(rest.split(':', 1)[0])
    names = {}
    for lib, offsets in wanted.items():
        offs = sorted(offsets)
        # the return address points past the call: name the byte before it
        out = subprocess.run(['addr2line', '-f', '-C', '-e', libs[lib]] + ['0x%x' % (int(o, 16) - 1) for o in offs],
                             capture_output=True, text=True).stdout.splitlines()
        for i, o in enumerate(offs):
            names[(lib, o)] = out[2 * i] if 2 * i < len(out) else '?'
    def name(frame):
        lib, rest = frame.split('+', 1)
        off, sym = rest.split(':', 1)
        if (lib, off) in names:
            return names[(lib, off)] + ' (' + lib + ')'
        return (sym if sym != '?' else '?') + ' (' + lib + ')'
    self_c, total_c = collections.Counter(), collections.Counter()
    for s in samples:
        named = [name(f) for f in s]
        if named:
            self_c[named[0]] += 1
        for n in set(named):
            total_c[n] += 1
    for title, c in (('self', self_c), ('total', total_c)):
        print('%s (%d samples):' % (title, len(samples)))
        for n, k in c.most_common(top):
            print('  %6.1f%%  %s' % (100.0 * k / max(len(samples), 1), n))


if __name__ == '__main__':
    main()
