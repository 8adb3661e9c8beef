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
# Issue 55: the timeline is in the report's first screen (1280x1000), right after the headline numbers.
# The screenshot of that screen shows its bars (a single's blue #4f81bd, a group member's orange
# #e8a33d), and the page itself, measured in the browser, puts the timeline's top above 900 px.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$tmp/profile" --window-size=1280,1000 \
  --screenshot="$tmp/shot.png" "file://$tmp/run/report.html" >/dev/null 2>&1
[[ -s "$tmp/shot.png" ]] || { echo "FAIL: no screenshot"; exit 1; }
python3 "$root/tests/viz/png_not_blank.py" "$tmp/shot.png" 4f81bd:2000 e8a33d:500 ||
  { echo "FAIL: the timeline's bars are not in the report's first screen (1280x1000)"; exit 1; }
sed 's#</body>#<script>document.body.setAttribute("data-timeline-top", Math.round(document.querySelector(".pic.timeline").getBoundingClientRect().top));</script></body>#' \
  "$tmp/run/report.html" >"$tmp/run/measure.html"
top=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$tmp/profile" --window-size=1280,1000 \
  --dump-dom "file://$tmp/run/measure.html" 2>/dev/null | grep -o 'data-timeline-top="[0-9-]*"' | grep -o '[0-9-]*')
[[ -n "$top" ]] || { echo "FAIL: no timeline (.pic.timeline) in report.html"; exit 1; }
echo "timeline's top in report.html at 1280x1000: $top px"
(( top < 900 )) || { echo "FAIL: the timeline starts at $top px, below the first screen (900 px)"; exit 1; }
# The timeline explains the group's wait (issue 24): the singles that overtook g marked (#d35400), g's
# wait span and the strips on the targets that held it (its colour, #ff9f1c), all on the screen (the
# triangles, white-edged as in the legend, are about 14 px each).
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$tmp/profile" --window-size=1280,600 \
  --screenshot="$tmp/timeline.png" "file://$tmp/run/timeline.svg" >/dev/null 2>&1
[[ -s "$tmp/timeline.png" ]] || { echo "FAIL: no screenshot of timeline.svg"; exit 1; }
python3 "$root/tests/viz/png_not_blank.py" "$tmp/timeline.png" d35400:60 ff9f1c:300
