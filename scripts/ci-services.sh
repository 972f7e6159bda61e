# shellcheck shell=bash
# Services the test suite needs, for a fresh Debian machine or CI (sourced by
# scripts/test.sh before pytest; safe to source again). It installs PostgreSQL and
# Chromium with apt when they are missing, starts the PostgreSQL cluster, creates a
# throw-away test role and database, and exports DATABASE_URL_TEST for the API tests
# marked `postgres`. Works as root (or with passwordless sudo), never reads stdin, and
# returns non-zero (without exiting the shell that sourced it) when something fails.

_canasta_ci_services() {
    local sudo="" missing=() pg_bin version
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
            echo "ci-services: not root and no sudo; cannot install or start PostgreSQL" >&2
            return 1
        fi
    fi

    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$pg_bin" ] && [ -x "$pg_bin/postgres" ] || missing+=(postgresql)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "ci-services: installing ${missing[*]} with apt" >&2
        export DEBIAN_FRONTEND=noninteractive
        # Another apt (unattended upgrades on a fresh VM) holds the lock for a while.
        local waited=0
        while pgrep -x apt-get >/dev/null 2>&1 || pgrep -x dpkg >/dev/null 2>&1; do
            [ $waited -ge 600 ] && break
            sleep 5; waited=$((waited + 5))
        done
        $sudo apt-get update -q </dev/null >&2 || return 1
        $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2 \
            || { echo "ci-services: apt-get install ${missing[*]} failed" >&2; return 1; }
        pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    fi
    command -v chromium >/dev/null 2>&1 \
        || { echo "ci-services: chromium is not installed" >&2; return 1; }

    version=$(basename "$(dirname "$pg_bin")")
    if command -v pg_lsclusters >/dev/null 2>&1; then
        if ! pg_lsclusters -h 2>/dev/null | awk '{print $1, $2}' | grep -qx "$version main"; then
            $sudo pg_createcluster "$version" main >&2 || return 1
        fi
        if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $4}' \
                | grep -qx online; then
            $sudo pg_ctlcluster "$version" main start >&2 \
                || { echo "ci-services: PostgreSQL $version did not start" >&2; return 1; }
        fi
    else
        echo "ci-services: postgresql-common (pg_ctlcluster) is missing" >&2
        return 1
    fi
    local port
    port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')
    local i
    for i in $(seq 1 30); do
        pg_isready -q -h 127.0.0.1 -p "$port" && break
        sleep 1
    done
    pg_isready -q -h 127.0.0.1 -p "$port" \
        || { echo "ci-services: PostgreSQL is not accepting connections on $port" >&2; return 1; }

    local as_pg
    if [ "$(id -u)" -eq 0 ]; then as_pg="runuser -u postgres --"; else as_pg="$sudo -u postgres"; fi
    $as_pg psql -q -p "$port" -v ON_ERROR_STOP=1 -d postgres >/dev/null <<'SQL' || return 1
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'canasta_test') THEN
    CREATE ROLE canasta_test LOGIN PASSWORD 'canasta_test';
  END IF;
END $$;
SQL
    if ! $as_pg psql -p "$port" -tAc "SELECT 1 FROM pg_database WHERE datname='canasta_test'" \
            -d postgres </dev/null | grep -qx 1; then
        $as_pg createdb -p "$port" -O canasta_test canasta_test </dev/null || return 1
    fi
    export DATABASE_URL_TEST="postgresql://canasta_test:canasta_test@127.0.0.1:$port/canasta_test"
    echo "ci-services: PostgreSQL $version on port $port (DATABASE_URL_TEST set), chromium ok" >&2
}

_canasta_ci_services
