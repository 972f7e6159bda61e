#!/usr/bin/env bash
# Set up (create/reuse .venv, install the package) and start the canasta-scan web service
# with the bundled model and a SQLite database: http://127.0.0.1:8000 by default.
# Arguments go to `canasta-scan serve` (e.g. --host 0.0.0.0 --port 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh ""
exec .venv/bin/canasta-scan serve "$@"
