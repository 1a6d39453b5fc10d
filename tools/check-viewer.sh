#!/usr/bin/env bash
# Opens tracemerge's exports in the viewers this machine can run, headless,
# and records what each showed (docs/exports.md, "Viewers"). Not a test:
# CI never runs it (it needs a browser, which CI must not download).
#
#   tools/check-viewer.sh [BUILD_DIR [OUT_DIR]]
#
# Needs chromium and chromium-driver (Debian: apt-get install chromium
# chromium-driver) and python3. Optional: SPEEDSCOPE_DIR, a directory
# where `npm install --prefix DIR speedscope` was run; without it the
# speedscope check is skipped. Nothing is downloaded here.
#
# It exports two merges with BUILD_DIR's tracemerge (default build/):
#   example   the demo's phone + backend (tests/data/example)
#   system    systing-trace.pb (server) + catapult-webview.json (phone),
#             from tests/data/real, related as tests/test_e2e_export.c does
# as OUT_DIR/<merge>.json and OUT_DIR/<merge>.pftrace (default OUT_DIR: a
# new temporary directory), then drives Chromium through chromedriver
# (the W3C WebDriver protocol, python3's standard library only):
#   1. chrome://chrome-urls: turns on "internal debugging pages" (where
#      Chromium lists chrome://tracing) and notes whether it is listed;
#   2. chrome://tracing: notes what the page is (title, URL, text) and
#      takes a screenshot;
#   3. speedscope (when SPEEDSCOPE_DIR is set): loads each export as the
#      speedscope CLI does (a script calling loadFileFromBase64), notes the
#      profile's title ("<process>, <thread> (1/N)": N thread profiles),
#      what speedscope says it imported it as, and takes a screenshot.
# Everything goes to OUT_DIR/report.txt and OUT_DIR/*.png; look at them.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-$(mktemp -d /tmp/tracemerge-viewer.XXXXXX)}
mkdir -p "$out"
tm="$build/tools/tracemerge"
for tool in chromium chromedriver python3 zip; do
  command -v "$tool" >/dev/null || { echo "check-viewer: $tool is not installed" >&2; exit 2; }
done
[ -x "$tm" ] || { echo "check-viewer: no $tm (build first)" >&2; exit 2; }

# The two merges.
rm -f "$out/example.zip" "$out/system.zip"
(cd tests/data/example && zip -q "$out/example.zip" perfetto_manifest.json client.json server.json)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/data/real/proto/systing-trace.pb "$work/"
gunzip -c tests/data/real/json/catapult-webview.json.gz >"$work/webview.json"
cat >"$work/perfetto_manifest.json" <<'EOF'
{"perfetto_manifest": {"version": 1, "files": [
  {"path": "systing-trace.pb", "machine": {"name": "server"}},
  {"path": "webview.json", "machine": {"name": "phone"},
   "clocks": {"sync_to": {"file": "systing-trace.pb", "clock": "BOOTTIME"}, "offset_ns": 1000}}]}}
EOF
(cd "$work" && zip -q "$out/system.zip" perfetto_manifest.json systing-trace.pb webview.json)
for merge in example system; do
  "$tm" export "$out/$merge.zip" -o "$out/$merge.json"
  "$tm" export "$out/$merge.zip" -o "$out/$merge.pftrace"
done

python3 - "$out" "${SPEEDSCOPE_DIR:-}" <<'EOF'
import base64, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

out, speedscope_dir = sys.argv[1], sys.argv[2]
report = open(os.path.join(out, "report.txt"), "w")

def say(*parts):
    line = " ".join(str(p) for p in parts)
    print(line)
    report.write(line + "\n")

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

port = free_port()

def call(method, path, body=None):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=180) as r:
        return json.loads(r.read())["value"]

profile = tempfile.mkdtemp(prefix="tracemerge-viewer-profile.")
driver = subprocess.Popen(["chromedriver", f"--port={port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
session = None

def script(code, *args):
    return call("POST", f"/session/{session}/execute/sync", {"script": code, "args": list(args)})

def go(url, wait):
    call("POST", f"/session/{session}/url", {"url": url})
    time.sleep(wait)

def screenshot(name):
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(base64.b64decode(call("GET", f"/session/{session}/screenshot")))
    return path

def browser_log():
    try:
        return call("POST", f"/session/{session}/se/log", {"type": "browser"})
    except Exception:
        return []

# Every element of the page, shadow roots included (WebUI pages are made
# of custom elements).
DEEP = """
const all = [];
(function walk(root) {
  for (const el of root.querySelectorAll('*')) {
    all.push(el);
    if (el.shadowRoot) walk(el.shadowRoot);
  }
})(document);
"""

try:
    for _ in range(100):
        try:
            call("GET", "/status")
            break
        except Exception:
            time.sleep(0.1)
    caps = {"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:loggingPrefs": {"browser": "ALL"},
        "goog:chromeOptions": {"binary": shutil.which("chromium"), "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1600,1000",
            "--allow-file-access-from-files", "--user-data-dir=" + profile]}}}}
    session = call("POST", "/session", caps)["sessionId"]
    say("browser:", call("GET", "/status").get("build", {}).get("version", "?"),
        "/", subprocess.run(["chromium", "--version"], capture_output=True,
                            text=True).stdout.strip())

    # 1. Internal debugging pages on; is chrome://tracing listed?
    go("chrome://chrome-urls", 2)
    buttons = script(DEEP + """
      const b = all.filter(e => e.tagName === 'CR-BUTTON');
      const names = b.map(e => e.textContent.trim());
      const on = b.find(e => /Enable internal debugging pages/.test(e.textContent));
      if (on) on.click();
      return names;""")
    say("chrome://chrome-urls buttons:", buttons)
    go("chrome://chrome-urls", 2)
    urls = script(DEEP + "return all.filter(e => e.tagName === 'A').map(e => e.textContent.trim());")
    say("chrome://chrome-urls lists", len(urls), "URLs; tracing ones:",
        [u for u in urls if "trac" in u])

    # 2. chrome://tracing itself.
    go("chrome://tracing", 5)
    title, href, text = script(
        "return [document.title, location.href, document.body ? document.body.innerText : '']")
    say("chrome://tracing: title", repr(title), "url", href)
    say("chrome://tracing: text", repr(text[:400]))
    say("chrome://tracing: screenshot", screenshot("chrome-tracing.png"))
    if href.startswith("chrome://tracing"):
        say("chrome://tracing loaded: open the exports with its Load button by hand "
            "(loading is not automated here: no build at hand had the page)")

    # 3. speedscope.
    if not speedscope_dir:
        say("speedscope: skipped (set SPEEDSCOPE_DIR to a directory where "
            "`npm install --prefix DIR speedscope` was run)")
    else:
        index = os.path.join(speedscope_dir, "node_modules", "speedscope", "dist",
                             "release", "index.html")
        version = json.load(open(os.path.join(os.path.dirname(os.path.dirname(
            os.path.dirname(index))), "package.json")))["version"]
        say("speedscope", version)
        for name in ["example.json", "system.json", "example.pftrace", "system.pftrace"]:
            src = os.path.join(out, name)
            loader = os.path.join(profile, name + ".js")
            with open(loader, "w") as f:
                data = base64.b64encode(open(src, "rb").read()).decode()
                f.write(f"speedscope.loadFileFromBase64({json.dumps(name)}, {json.dumps(data)})")
            go("about:blank", 0.5)  # a new document: only the #hash would change
            browser_log()  # drop what earlier pages logged
            go("file://" + index + "#localProfilePath=" + loader, 8)
            shown = script("return document.body.innerText").replace("\n", " | ")
            imported = [l["message"].split('"')[-2] for l in browser_log()
                        if "Importing as" in l["message"] or "rror" in l["message"]]
            say(f"speedscope {name}:", repr(shown[:300]))
            say(f"speedscope {name}: log", imported)
            say(f"speedscope {name}: screenshot", screenshot(f"speedscope-{name}.png"))
finally:
    if session:
        try:
            call("DELETE", f"/session/{session}")
        except Exception:
            pass
    driver.terminate()
    driver.wait()
    shutil.rmtree(profile, ignore_errors=True)
    report.close()
EOF
echo "check-viewer: report and screenshots in $out"
