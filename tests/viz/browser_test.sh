#!/usr/bin/env bash
# End to end: run a scenario, open report.html in headless Chromium, and check the screenshot is not
# blank, and that the timeline's marks of a waiting group show. Exits 77 (ctest: skipped) with a message when Chromium is absent.
set -u
dirsched=$1
root=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z "$browser" ]]; then
  echo "SKIPPED: chromium is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$dirsched" run "$root/scenarios/group-starvation.json" --out "$tmp/run" >/dev/null || exit 1
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$tmp/profile" --window-size=1280,1400 \
  --screenshot="$tmp/shot.png" "file://$tmp/run/report.html" >/dev/null 2>&1
[[ -s "$tmp/shot.png" ]] || { echo "FAIL: no screenshot"; exit 1; }
python3 "$root/tests/viz/png_not_blank.py" "$tmp/shot.png" || exit 1
# The timeline explains the group's wait (issue 24): the singles that overtook g marked (#d35400), g's
# wait span and the strips on the targets that held it (its colour, #ff9f1c), all on the screen.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$tmp/profile" --window-size=1280,600 \
  --screenshot="$tmp/timeline.png" "file://$tmp/run/timeline.svg" >/dev/null 2>&1
[[ -s "$tmp/timeline.png" ]] || { echo "FAIL: no screenshot of timeline.svg"; exit 1; }
python3 "$root/tests/viz/png_not_blank.py" "$tmp/timeline.png" d35400:100 ff9f1c:300
