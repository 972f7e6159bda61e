#!/usr/bin/env bash
# Set up (create/reuse .venv, install the package with its test extras, and the services
# the tests need: PostgreSQL and Chromium via scripts/ci-services.sh) and run every test.
# Arguments go to pytest (e.g. tests/scanner -x). Exits non-zero if any test fails, or if
# no test was collected.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh test
if [ -f scripts/ci-services.sh ]; then
    source scripts/ci-services.sh || { echo "test.sh: setting up test services failed" >&2; exit 1; }
fi
status=0
.venv/bin/python -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "test.sh: pytest collected no tests; that is a failure" >&2
    exit 1
fi
exit "$status"
