#!/usr/bin/env bash
# A Python like the lent GPU machines' image for the GPU plan's dry run
# (experiments/gpu_plan_dryrun.sh's IMAGE_PYTHON): only the packages the image holds, so an import
# the carried wheels lack fails here as it would there.
#
#   bash experiments/image_python.sh [DIR]      # default /tmp/imgsim; needs PyPI
#
# The image's package list is the workplace's (KINDS, "Python packages already there"); each
# package of it that the lock pins is installed at the lock's version without its dependencies,
# except pandas: the image's is 3.x, which needs no pytz (the image has none), and the lock's
# 2.3.3 fails at import without it. Python is this machine's (3.11), the image's is 3.12.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/tmp/imgsim}
KINDS=${IMAGE_KINDS:-/work/.library/device/KINDS.md}
IMAGE_PANDAS=${IMAGE_PANDAS:-3.1.1}
[ -f "$KINDS" ] || { echo "image_python: no package list at $KINDS (IMAGE_KINDS)" >&2; exit 2; }
req=$(mktemp)
python3 - "$KINDS" requirements/lock-py311.txt "$IMAGE_PANDAS" > "$req" <<'EOF'
import re
import sys

kinds, lock, pandas = sys.argv[1:]
norm = lambda name: re.sub(r"[-_.]+", "-", name.strip().lower())
listed = open(kinds).read().split("Packages: ", 1)[1].split("\n", 1)[0].rstrip(".")
image = {norm(p) for p in listed.split(",")}
for line in open(lock):
    pin = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line)
    if pin and norm(pin.group(1)) in image:
        version = pandas if norm(pin.group(1)) == "pandas" else pin.group(2)
        print(f"{pin.group(1)}=={version}")
EOF
python3 -m venv "$DIR"
"$DIR/bin/pip" install -q --no-deps -r "$req" 2>&1 | grep -v "^WARNING: Location" || true
echo "image_python: $(wc -l < "$req") packages of the image's list in $DIR"
"$DIR/bin/python" -c "import jax, flax, optax, chex, orbax.checkpoint, pandas, pyarrow, scipy, yaml"
rm -f "$req"
