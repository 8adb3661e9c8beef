#!/usr/bin/env bash
# The compare excerpts of the README's tour and of docs/tutorial-two-policies.md are what
# scripts/regress-policies.sh prints: the script runs in a temporary folder, and every line of the
# indented block under each file's `<!-- docs.readme-compare` marker must appear in its output, in order,
# each run of lines between `...` lines contiguous. The script exits 0 although compare finds differences, and passes on compare's 2.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
(cd "$tmp" && bash "$root/scripts/regress-policies.sh" "$dirsched" out/regress-policies >out.txt 2>err.txt)
rc=$?
[[ $rc -eq 0 ]] || { echo "FAIL regress-policies.sh exited $rc (expected 0 when the runs differ)"; cat "$tmp/err.txt"; fail=1; }
for doc in README.md docs/tutorial-two-policies.md; do
python3 - "$root/$doc" "$tmp/out.txt" "$doc" <<'PY' || fail=1
import sys
name = sys.argv[3]
readme = open(sys.argv[1]).read().splitlines()
out = open(sys.argv[2]).read().splitlines()
at = next((i for i, l in enumerate(readme) if l.startswith("<!-- docs.readme-compare")), None)
if at is None:
    sys.exit(f"FAIL {name} has no <!-- docs.readme-compare marker")
block = []
for l in readme[at + 1:]:
    if not l.startswith("    "):
        break
    block.append(l[4:])
chunks, cur = [], []
for l in block + ["..."]:
    if l == "...":
        if cur:
            chunks.append(cur)
        cur = []
    else:
        cur.append(l)
if sum(len(c) for c in chunks) < 5:
    sys.exit(f"FAIL the {name} excerpt has fewer than 5 lines: the marker no longer precedes it")
pos = 0
for c in chunks:
    found = next((i for i in range(pos, len(out) - len(c) + 1) if out[i:i + len(c)] == c), None)
    if found is None:
        print(f"FAIL {name} excerpt not in regress-policies.sh's output (in order):")
        print("\n".join("  " + l for l in c))
        print("actual output:")
        print("\n".join("  " + l for l in out))
        sys.exit(1)
    pos = found + len(c)
print(f"docs: the compare excerpt of {name} ({sum(len(c) for c in chunks)} lines) matches")
PY
done
# A compare that fails for real (a corrupt folder: status 2) is passed on, and the last line is not printed.
cat >"$tmp/fake" <<FAKE
#!/usr/bin/env bash
[[ \$1 == compare ]] && { echo "compare: corrupt" >&2; exit 2; }
exec "$dirsched" "\$@"
FAKE
chmod +x "$tmp/fake"
(cd "$tmp" && bash "$root/scripts/regress-policies.sh" "$tmp/fake" second >out2.txt 2>err2.txt)
rc=$?
[[ $rc -eq 2 ]] || { echo "FAIL regress-policies.sh exited $rc when compare exited 2 (expected 2)"; fail=1; }
grep -q '^open ' "$tmp/out2.txt" && { echo "FAIL regress-policies.sh printed its last line after compare failed"; fail=1; }
exit $fail
