"""Sum meson test results over several testlog.json files: 'N passed, M failed'."""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            r = json.loads(line).get("result")
            if r in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif r == "SKIP":
                skipped += 1
            else:
                failed += 1
if skipped:
    print(f"({skipped} skipped)")
print(f"{passed} passed, {failed} failed")
