"""One truth for the version and the runner's sizes: meson.build's project version is what
cudavision-run --version and the plugin say, what deploy/Containerfile's VERSION and every image
tag of cudavision-run in deploy/ and docs/ repeat; the StatefulSet's resources are the figures
docs/fleet.md ("Kubernetes", Resources) gives, and its comment quotes none of its own.
  check-versions.py SOURCE_ROOT VERSION BUILD_DIR"""
import pathlib
import re
import subprocess
import sys

root, version, build = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
failures = []


def need(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


runner = build / "runner" / "cudavision-run"
if runner.exists():
    out = subprocess.run([runner, "--version"], capture_output=True, text=True).stdout
    need(out.startswith(f"cudavision-run {version} "), f"cudavision-run --version: {out.strip()!r}")
config = (build / "config.h").read_text()
need(f'#define VERSION "{version}"' in config, "the plugin's VERSION (config.h)")

containerfile = (root / "deploy" / "Containerfile").read_text()
args = re.findall(r"^ARG VERSION=(\S+)", containerfile, re.M)
need(args == [version], f"deploy/Containerfile's ARG VERSION: {args}")
kustomization = (root / "deploy" / "kubernetes" / "kustomization.yaml").read_text()
tag = re.search(r"- name: cudavision-run\n(?:\s+\w+: .*\n)*?\s+newTag: (\S+)", kustomization)
need(tag is not None and tag.group(1) == version, f"kustomization.yaml's newTag: {tag and tag.group(1)}")
for path in sorted([*root.glob("deploy/**/*"), *root.glob("docs/*.md"), root / "README.md"]):
    if path.is_file():
        for found in re.findall(r"cudavision-run:(\d[\w.-]*)", path.read_text(errors="replace")):
            need(found == version, f"{path.relative_to(root)}: cudavision-run:{found}")

fleet = (root / "docs" / "fleet.md").read_text()
bullet = re.search(r"- \*\*Resources\*\*:(.*?)\n- \*\*", fleet, re.S).group(1)
cpu = re.search(r"requests (\d+) CPUs and is limited to (\d+)", bullet)
memory = re.search(r"\((\d+) GiB requested, (\d+) GiB limit\)", " ".join(bullet.split()))
statefulset = (root / "deploy" / "kubernetes" / "statefulset.yaml").read_text()
block = re.search(r"((?:\s*#.*\n)*)\s*resources:\n\s+requests:\n\s+cpu: \"?(\d+)\"?\n\s+memory: (\d+)Gi\n"
                  r"\s+limits:\n\s+cpu: \"?(\d+)\"?\n\s+memory: (\d+)Gi", statefulset)
need(cpu is not None and memory is not None and block is not None, "docs/fleet.md's Resources and the StatefulSet's")
if cpu and memory and block:
    comment, req_cpu, req_mem, lim_cpu, lim_mem = block.groups()
    need((req_cpu, lim_cpu) == cpu.groups(), f"CPUs: the StatefulSet {req_cpu} and {lim_cpu}, docs/fleet.md {cpu.groups()}")
    need((req_mem, lim_mem) == memory.groups(),
         f"memory: the StatefulSet {req_mem} and {lim_mem} GiB, docs/fleet.md {memory.groups()}")
    need("docs/fleet.md" in comment and not re.search(r"\d", comment),
         "the StatefulSet's resources comment cites docs/fleet.md and gives no figure of its own")
sys.exit(1 if failures else 0)
