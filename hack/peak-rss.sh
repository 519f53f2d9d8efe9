#!/usr/bin/env bash
# peak-rss.sh ROUNDS FILE CMD BIN...: peak RSS (MiB) and user+system CPU seconds of "BIN CMD --snapshot FILE",
# the binaries interleaved, each run from a fresh copy of its binary: the kernel maps an older binary's text with
# huge pages over time (khugepaged), which adds up to about 50 MiB of RSS to one binary and not another.
#
#   hack/peak-rss.sh 2 big300.json "why-pending pending-big -n team-1" ./kh-base ./kh-head
set -euo pipefail
rounds=${1:?usage: hack/peak-rss.sh ROUNDS FILE CMD BIN...}
file=$2 cmd=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for _ in $(seq 1 "$rounds"); do
	for b in "$@"; do
		cp "$b" "$work/fresh"
		# shellcheck disable=SC2086 # CMD is words
		/usr/bin/time -f "$b %U %S %M" "$work/fresh" $cmd --snapshot "$file" 2>&1 >/dev/null | tail -1
		rm -f "$work/fresh"
	done
done | awk '{a[$1] = a[$1] " " int($4 / 1024); c[$1] = c[$1] " " ($2 + $3)} END {for (k in a) print k, "MiB", a[k], "| CPU-s", c[k]}' | sort
