#!/usr/bin/env python3
"""What one import of the fabric client touches: the 64-byte lines and 4 KB
pages of code and of data that an import (fab_client_import, fab_region_map,
the touch, fab_region_unmap, fab_region_release) reaches, counted from every
load, store and instruction valgrind's lackey tool reports. With many
importers taking turns on a core each import finds these cold, so each line
and page is a miss (docs/cuda.md, "Where the import stands"). Counts, not
times: the same for the same binary and environment, whatever else the
machine does.

Usage: bench/import_footprint.py [--daemon] [BUILD_DIR [IMPORTS]]   (build, 300)

It runs BUILD_DIR/bench/bench_fabric --imports IMPORTS under
valgrind --tool=lackey --trace-mem=yes --trace-children=yes, finds the
importer's trace by the entry of fab_client_import, cuts it there into
imports, and prints the median over the imports after the first third (the
warm-up) of:
  code   lines and pages of instructions (the program's own: bench_fabric with
         the client library linked in; the rest: libc, the loader)
  data   lines and pages loaded or stored (the stack's apart)
With --daemon the same for fabmemd's side of each import: bench_fabric runs
natively and its daemon (FABMEM_DAEMON) under lackey, whose trace is cut at
each entry of fab__request_decode (one request an import: the previous
import's release rides on the next IMPORT); "the program's own" is then
fabmemd's.
Exit status 0; 1 with a message when a step fails; 77 (a skip, for ctest)
when valgrind is not installed."""
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

# Where valgrind's amd64 loader puts a position-independent program.
PIE_BASE = 0x108000


def fail(msg):
    print("import_footprint: " + msg, file=sys.stderr)
    sys.exit(1)


def symbol_offset(binary, names):
    """The first of names that the binary has, as (name, offset). A name
    may carry a suffix of GCC's (fab__import.constprop.0: a clone), but
    not .part (a split's tail, not the function's entry); a name that
    link-time optimisation inlined everywhere has no symbol, and the next
    one is tried. Any function entered once a request cuts the
    same cycle, so which one is taken moves the cut, not the counts."""
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    symbols = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            symbols.setdefault(parts[2], int(parts[0], 16))
    for name in names:
        if name in symbols:
            return name, symbols[name]
        clones = sorted(s for s in symbols if s.startswith(name + ".") and ".part" not in s)
        if clones:
            return clones[0], symbols[clones[0]]
    fail("%s has none of the symbols %s" % (binary, ", ".join(names)))


def image_end(binary):
    """The end of the program's highest LOAD segment, from its start."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                         check=True).stdout
    end = 0
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "LOAD":
            end = max(end, int(parts[2], 16) + int(parts[5], 16))
    return end


def imports_of(log, entry):
    """Each import's sets of code lines and data lines (64-byte units)."""
    imports = []
    cur = None
    with open(log) as f:
        for line in f:
            kind = line[:2]
            if kind == "I ":
                addr = int(line[3:line.index(",")], 16)
                if addr == entry:
                    cur = (set(), set())
                    imports.append(cur)
                if cur is not None:
                    cur[0].add(addr >> 6)
            elif cur is not None and kind in (" L", " S", " M"):
                cur[1].add(int(line[3:line.index(",")], 16) >> 6)
    return imports


def main():
    args = sys.argv[1:]
    daemon = bool(args) and args[0] == "--daemon"
    if daemon:
        args = args[1:]
    build = args[0] if len(args) > 0 else "build"
    count = int(args[1]) if len(args) > 1 else 300
    if count < 30:
        fail("at least 30 imports, so that the warm-up can be left out")
    if shutil.which("valgrind") is None:
        print("import_footprint: skipped: valgrind is not installed")
        return 77
    bench = os.path.join(build, "bench", "bench_fabric")
    binary = os.path.join(build, "src", "daemon", "fabmemd") if daemon else bench
    for path in (bench, binary):
        if not os.access(path, os.X_OK):
            fail("no %s: build first" % path)
    # Where each import's trace is cut: the first of these the binary has.
    if daemon:
        cuts = ("fab__request_decode", "fab__registry_answer")
    else:
        cuts = ("fab_client_import", "fab__region_from_reply")
    symbol, offset = symbol_offset(binary, cuts)
    entry = PIE_BASE + offset
    own = (PIE_BASE, PIE_BASE + image_end(binary))
    with tempfile.TemporaryDirectory(prefix="import_footprint.") as tmp:
        lackey = ["valgrind", "--tool=lackey", "--trace-mem=yes", "--trace-children=yes",
                  "--log-file=" + os.path.join(tmp, "%p.log")]
        env = dict(os.environ)
        if daemon:
            wrapper = os.path.join(tmp, "fabmemd")
            with open(wrapper, "w") as f:
                f.write("#!/bin/sh\nexec %s %s \"$@\"\n"
                        % (" ".join(lackey), os.path.abspath(binary)))
            os.chmod(wrapper, 0o755)
            env["FABMEM_DAEMON"] = wrapper
            cmd = [bench, "--imports", str(count)]
        else:
            cmd = lackey + [bench, "--imports", str(count)]
        run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             env=env)
        if run.returncode != 0:
            fail("%s failed (%d): %s" % (" ".join(cmd), run.returncode, run.stderr.strip()))
        # The importer: of the traces of this binary (every program is put
        # at the same base, so fabmemd's trace may run an instruction at
        # the same address), the one that enters the symbol most (another
        # of the benchmark's processes enters it a few times too).
        pattern = re.compile(r"^I  0*%x," % entry, re.M)
        command = re.compile(r"^==\d+== Command: (\S+)", re.M)
        real = os.path.realpath(binary)
        importer, most = None, 0
        for name in sorted(os.listdir(tmp)):
            path = os.path.join(tmp, name)
            with open(path) as f:
                text = f.read()
            ran = command.search(text)
            if ran is None or os.path.realpath(ran.group(1)) != real:
                continue
            hits = len(pattern.findall(text))
            if hits > most:
                importer, most = path, hits
        if importer is None:
            fail("no trace runs %s at %#x (valgrind put the program elsewhere?)"
                 % (symbol, entry))
        imports = imports_of(importer, entry)
    if daemon:
        # The HELLO, and the requests of the benchmark's other processes,
        # come before the importer's: the last count are its imports.
        if len(imports) < count:
            fail("the daemon's trace holds %d requests, not the %d imports at least"
                 % (len(imports), count))
        imports = imports[-count:]
    elif len(imports) != count:
        fail("the importer's trace holds %d imports, not %d" % (len(imports), count))
    kept = imports[count // 3:-1]  # the last one runs into the exit
    stack_floor = None
    for _, data in kept:
        top = max(data) << 6
        stack_floor = top - (8 << 20) if stack_floor is None else max(stack_floor, top - (8 << 20))

    def median(values):
        return int(statistics.median(values))

    def pages(lines):
        return {line >> 6 for line in lines}

    rows = collections.OrderedDict()
    rows["code"] = [code for code, _ in kept]
    rows["  the program's own"] = [{l for l in code if own[0] <= l << 6 < own[1]}
                                   for code, _ in kept]
    rows["data"] = [data for _, data in kept]
    rows["  the stack"] = [{l for l in data if l << 6 >= stack_floor} for _, data in kept]
    print("import footprint%s: bench_fabric --imports %d%s under lackey, median of imports %d-%d"
          % (" in fabmemd" if daemon else "", count, ", its fabmemd" if daemon else "",
             count // 3 + 1, count - 1))
    for name, sets in rows.items():
        print("  %-20s %4d lines on %3d pages" % (name, median([len(s) for s in sets]),
                                                 median([len(pages(s)) for s in sets])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
