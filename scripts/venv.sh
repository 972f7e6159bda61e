# shellcheck shell=bash
# Create or reuse the project's virtual environment (.venv) and install the package into
# it, for scripts/serve.sh and scripts/test.sh. Usage: `source scripts/venv.sh EXTRAS`
# from the repository root, EXTRAS being "" (runtime) or "test". Installing is skipped
# when pyproject.toml has not changed since the last install into this .venv, so a
# second run starts at once. Needs Python >= 3.11; on Debian it installs python3-venv
# with apt when the venv module is missing (as root, or with passwordless sudo).

_canasta_venv() {
    local extras="$1" python="" candidate spec stamp want
    for candidate in python3.13 python3.12 python3.11 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c \
                'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            python="$candidate"
            break
        fi
    done
    if [ -z "$python" ]; then
        echo "venv: Python 3.11 or newer is needed (python3 --version: $(python3 --version 2>&1))" >&2
        return 1
    fi

    if [ ! -x .venv/bin/python ]; then
        echo "venv: creating .venv with $("$python" --version 2>&1)" >&2
        if ! "$python" -m venv .venv 2>/dev/null; then
            # Debian ships the venv module (ensurepip) as a separate package.
            rm -rf .venv
            local sudo=""
            [ "$(id -u)" -ne 0 ] && sudo="sudo -n"
            echo "venv: installing python3-venv with apt" >&2
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-venv </dev/null >&2 \
                || { echo "venv: cannot create .venv (install python3-venv)" >&2; return 1; }
            "$python" -m venv .venv || return 1
        fi
    fi

    spec="."
    [ -n "$extras" ] && spec=".[$extras]"
    stamp=".venv/.canasta-installed${extras:+-$extras}"
    want="$(sha256sum pyproject.toml | cut -d' ' -f1) $(pwd)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
            && .venv/bin/python -c 'import scanner.scoring' 2>/dev/null; then
        return 0
    fi
    echo "venv: installing canasta-scan ($spec) into .venv" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -e "$spec" >&2 || return 1
    echo "$want" > "$stamp"
}

_canasta_venv "${1:-}"
