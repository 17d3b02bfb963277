#!/usr/bin/env bash
# The README's app (fitbase-readme-app, Examples/ReadmeApp) against a fresh `fitbase serve`, configured with nothing
# but the README's `FitBaseDependencies.live(...)` call:
#
# 1. No drift: the snippet's `FitBaseDependencies.live(...)` call and the program's are the same text (whitespace
#    aside), and the program calls every `app.…` hook the snippet shows.
# 2. The program signs up, onboards (a last period, the analytics consent), checks that the Cycle screen's phase is
#    Today's and that the paywall shows the server's products, opens a mangled link and goes to the background.
# 3. An administrator reads the console: the dashboard counts every analytics event the program caused, and the
#    Reports page shows its launch trace (`app.launch`) and the mangled link's error (`invalidInput`).
#
#   scripts/ci/readme-app.sh [BIN_DIR]
#
# BIN_DIR holds fitbase and fitbase-readme-app (default: `swift build --show-bin-path`, built already). README_FILE
# names the README to compare with (default README.md; another file tries a proposed snippet). Stops everything it
# started.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-$(swift build --show-bin-path)}"
readme="${README_FILE:-README.md}"
program=Examples/ReadmeApp/main.swift

python3 - "$readme" "$program" <<'EOF'
import re, sys

def live_call(text, where):
    start = text.find("try! FitBaseDependencies.live(")
    if start < 0:
        sys.exit(f"readme-app: {where} has no `try! FitBaseDependencies.live(` call")
    depth = 0
    for end in range(start + len("try! FitBaseDependencies.live"), len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0:
            return text[start:end + 1]
    sys.exit(f"readme-app: {where}'s FitBaseDependencies.live( call is not closed")

readme_path, program_path = sys.argv[1], sys.argv[2]
readme, program = open(readme_path).read(), open(program_path).read()
snippet_call, program_call = live_call(readme, readme_path), live_call(program, program_path)
if re.sub(r"\s+", "", snippet_call) != re.sub(r"\s+", "", program_call):
    sys.exit(f"readme-app: the README's snippet and the program differ:\n  {readme_path}: {snippet_call}\n"
             f"  {program_path}: {program_call}")
# The snippet's code block: every hook it calls on the app model, the program calls too.
block_start = readme.rfind("```swift", 0, readme.find(snippet_call))
block = readme[block_start:readme.find("```", readme.find(snippet_call))]
hooks = set(re.findall(r"\bapp\.(\w+)\(", block))
missing = sorted(hook for hook in hooks if not re.search(r"\bapp\." + hook + r"\(", program))
if "AppModel(dependencies: dependencies)" not in block or "AppModel(dependencies: dependencies)" not in program:
    sys.exit("readme-app: the snippet and the program must both make AppModel(dependencies: dependencies)")
if missing:
    sys.exit(f"readme-app: the program never calls the snippet's app.{', app.'.join(missing)}")
print(f"readme-app: the program's live(...) call is the README's, and it calls the snippet's hooks ({', '.join(sorted(hooks))})")
EOF

work="$(mktemp -d /tmp/fitbase-readme-app.XXXXXX)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill -TERM "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

"$bin/fitbase" serve --port 0 --data-dir "$work/data" >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
source scripts/ci/serve-url.sh
url=$(wait_for_serve_url "$serve_pid" "$work")

# The app's default data directory is under the user's Application Support: $XDG_DATA_HOME on Linux, fresh here.
XDG_DATA_HOME="$work/app-home" "$bin/fitbase-readme-app" "$url" | tee "$work/app.out"
events=$(sed -n 's/^events: //p' "$work/app.out")
[ -n "$events" ] || { echo "readme-app: the program printed no events line"; exit 1; }

# An administrator reads the console with a cookie jar, as a browser would.
password="correct horse battery staple"
curl -fsS -o /dev/null -H 'Content-Type: application/json' -d "{\"email\":\"admin@readme.test\",\"password\":\"$password\"}" \
  "$url/v1/auth/signup"
"$bin/fitbase" admin grant-role admin@readme.test admin --data-dir "$work/data" >/dev/null
jar="$work/cookies"
csrf=$(curl -fsS -c "$jar" -b "$jar" "$url/console/signin" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1)
curl -fsS -o /dev/null -c "$jar" -b "$jar" --data-urlencode "csrf=$csrf" --data-urlencode "email=admin@readme.test" \
  --data-urlencode "password=$password" "$url/console/signin"
curl -fsS -b "$jar" "$url/console" >"$work/dashboard.html"
curl -fsS -b "$jar" "$url/console/reports" >"$work/reports.html"

python3 - "$work/dashboard.html" "$events" <<'EOF'
import re, sys
html, expected = open(sys.argv[1]).read(), dict(pair.split("=") for pair in sys.argv[2].split())
section = html[html.find('id="product-analytics"'):]
counted = {}
for name, cells in re.findall(r'<tr><th scope="row">([^<]+)</th>(.*?)</tr>', section):
    counted[name] = sum(int(n) for n in re.findall(r'<td class="num">(\d+)</td>', cells))
wrong = {name: (int(count), counted.get(name, 0)) for name, count in expected.items() if counted.get(name, 0) != int(count)}
if wrong:
    sys.exit("readme-app: the server's analytics differ from the app's (event: sent, counted): " + repr(wrong)
             + f"; the console counted {counted}")
print(f"readme-app: every event the app caused arrived at the server ({sys.argv[2]})")
EOF
grep -q '<code>app.launch</code>' "$work/reports.html" || { echo "readme-app: the Reports page has no app.launch trace"; exit 1; }
grep -q '<code>invalidInput</code>' "$work/reports.html" || { echo "readme-app: the Reports page lists no invalidInput error (the mangled link)"; exit 1; }
echo "readme-app: the Reports page shows the app's launch time and the mangled link's error"
